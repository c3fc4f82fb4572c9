package idempotency

import (
	"github.com/gopowertools/lambda/jmespath"
)

// An adapter's default payload validation can change between releases:
// records written before the change hold the former expression's hash.
// The adapter gives the option that says so, through the adapters' seam,
// and a record written under it matches still.

// formerValidation is a validation expression, expr, that the default
// validation of an adapter, of, replaced.
type formerValidation struct{ of, expr string }

// formerMatch reports whether rec's payload hash is the hash of what the
// former validation expression selects in payload: rec was written
// before the adapter's default changed. It reads payload again, on this
// rare path only.
func (e *engine) formerMatch(rec *Record, payload []byte) bool {
	if e.former == nil {
		return false
	}
	v, err := e.former.SearchJSON(payload)
	if err != nil {
		return false
	}
	h, err := e.keys.Digest(v)
	return err == nil && h == rec.PayloadHash
}

// compileFormer compiles o's former validation expression if the
// validation in effect is the one that replaced it, or returns nil.
func compileFormer(o *options, opts ...jmespath.Option) (*jmespath.Expression, error) {
	if o.former.expr == "" || o.validation != o.former.of {
		return nil, nil
	}
	return jmespath.Compile(o.former.expr, opts...)
}
