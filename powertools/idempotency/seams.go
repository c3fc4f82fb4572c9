package idempotency

import (
	"fmt"

	"github.com/gopowertools/lambda/internal/settingsource"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/adapters"
)

// The seams for this module's tools: the only ways into the package that
// are not its users', each in a package internal to the module, so that
// no user can reach it, and each kept to what its tool needs.
//
//   - internal/settingsource: the operator command asks which option or
//     environment variable gave each setting of a wrapper, and how a
//     variable's value reads, so that it shows the library's own answer
//     instead of working it out a second time.
//   - internal/adapters: this module's adapters (httpapi) get the option
//     that names an adapter's former default validation, the HTTP answer
//     that the table of errors gives an error, and the decoding of a
//     stored response that a replay gives as a value.
//   - internal/simclock: the simulator gives an invocation a clock of its
//     own, in its context; the engine reads the time left before a
//     deadline, its waits and their jitter from it, and from the real
//     clock outside the simulator.
//
// The package fills the first two when it is linked in.
func init() {
	settingsource.Of = func(opts any, function bool) (map[string]string, error) {
		kind := handlerKind
		if function {
			kind = funcKind
		}
		o, err := resolve(opts.([]Option), kind)
		if err != nil {
			return nil, err
		}
		sources := make(map[string]string, len(o.given))
		for option, s := range o.given {
			sources[option] = s.name
		}
		return sources, nil
	}
	settingsource.Parse = func(option, value string) (any, error) {
		spell, ok := spellings[option]
		if !ok {
			return nil, fmt.Errorf("%s has no spelling", option)
		}
		return spell(value)
	}
	adapters.FormerValidation = func(validation, former string) any {
		return Option(func(o *options) { o.former = formerValidation{of: validation, expr: former} })
	}
	adapters.DecodeResponse = decodeResponse
	adapters.Answer = func(err error) (int, string, error) {
		end, cause := endingOf(err)
		if end == nil {
			return 0, "", nil
		}
		return end.status, end.problem, cause
	}
}
