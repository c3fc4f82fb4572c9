package idempotency

import "context"

// keyContextKey is the context key under which the owner of a lease finds
// its idempotency key.
type keyContextKey struct{}

// withKey returns ctx carrying the idempotency key for the handler.
func withKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyContextKey{}, key)
}

// withoutKey hides an enclosing invocation's key from a function that runs
// without idempotency (no key in its event), so that it does not pass
// another request's key downstream.
func withoutKey(ctx context.Context) context.Context {
	if _, ok := KeyFromContext(ctx); !ok {
		return ctx
	}
	return context.WithValue(ctx, keyContextKey{}, nil)
}

// KeyFromContext returns the idempotency key of the invocation that ctx
// belongs to, as the handler sees it: pass it on as the Idempotency-Key of
// downstream calls so that a retried invocation is deduplicated end to end.
// It reports false when the handler runs without idempotency: disabled, or
// no key in the event and [WithKeyRequired] off.
func KeyFromContext(ctx context.Context) (string, bool) {
	key, ok := ctx.Value(keyContextKey{}).(string)
	return key, ok
}
