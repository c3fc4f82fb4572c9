package idempotency

import (
	"github.com/gopowertools/lambda/jmespath"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/hook"
)

// An adapter's default payload validation can change between releases:
// records written before the change hold the former expression's hash.
// internal/hook's FormerValidation gives the adapter the option that
// says so, and a record written under it matches still.

func init() {
	hook.FormerValidation = func(validation, former string) any {
		return Option(func(o *options) { o.former = formerValidation{of: validation, expr: former} })
	}
	hook.Answer = func(err error) (int, string, error) {
		end, cause := endingOf(err)
		if end == nil {
			return 0, "", nil
		}
		return end.status, end.problem, cause
	}
}

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
