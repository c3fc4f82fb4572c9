package idempotencytest

import "github.com/gopowertools/lambda/powertools/idempotency"

// ConfigError runs build, which calls idempotency.Wrap or
// idempotency.WrapFunc, and returns the *idempotency.ConfigError they
// panic with on an invalid configuration, or nil: for a test of a
// configuration. Any other panic goes on.
//
//	err := idempotencytest.ConfigError(func() {
//		idempotency.WrapFunc("charge", store, charge, idempotency.WithExpiresAfter(0))
//	})
func ConfigError(build func()) (err *idempotency.ConfigError) {
	defer func() {
		if r := recover(); r != nil {
			ce, ok := r.(*idempotency.ConfigError)
			if !ok {
				panic(r)
			}
			err = ce
		}
	}()
	build()
	return nil
}
