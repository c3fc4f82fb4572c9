package idempotency

import (
	"context"
	"fmt"
)

// keyContextKey is the context key under which the owner of a lease finds
// its idempotency key.
type keyContextKey struct{}

// withKey returns ctx carrying the idempotency key for the handler.
func withKey(ctx context.Context, key string) context.Context {
	return &keyContext{Context: ctx, key: key, set: true}
}

// keyContext is a context carrying an idempotency key, or hiding one when
// set is false. It is a type of its own rather than context.WithValue so
// that an invocation's [lease] can hold one and save an allocation on
// every first call. Only Value differs from the parent; Done and Err are
// the parent's own, so the context package's cancellation propagation sees
// through it as it sees through WithValue.
//
// Its key is a copy, never written once the context is made: goroutines
// the handler starts may read it after the handler has returned, while
// the middleware rewrites the invocation's record.
type keyContext struct {
	context.Context
	key string
	set bool
}

// Value answers the key as a pointer to the context's own copy: a string
// would be copied to the heap to fit in the interface value.
func (c *keyContext) Value(k any) any {
	if _, ok := k.(keyContextKey); ok {
		if !c.set {
			return (*string)(nil)
		}
		return &c.key
	}
	return c.Context.Value(k)
}

// String describes the context for debugging, as the context package's
// own contexts do.
func (c *keyContext) String() string {
	return fmt.Sprint(c.Context) + ".WithValue(idempotency key)"
}

// withoutKey hides an enclosing invocation's key from a function that runs
// without idempotency, such as one wrapped with [WrapFunc] whose argument has
// no key: the outer key does not identify its call.
func withoutKey(ctx context.Context) context.Context {
	if _, ok := KeyFromContext(ctx); !ok {
		return ctx
	}
	return &keyContext{Context: ctx}
}

// KeyFromContext returns the idempotency key of the invocation that ctx
// belongs to, as the handler sees it: pass it on as the Idempotency-Key of
// downstream calls so that a retried invocation is deduplicated end to end.
// It reports false when the handler runs without idempotency: disabled, or
// no key in the event and [WithKeyRequired] off.
func KeyFromContext(ctx context.Context) (string, bool) {
	key, _ := ctx.Value(keyContextKey{}).(*string)
	if key == nil {
		return "", false
	}
	return *key, true
}
