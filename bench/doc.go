// Package bench compares the project's JMESPath engine,
// github.com/gopowertools/lambda/jmespath, with
// github.com/jmespath/go-jmespath on the same documents in the same run.
//
// It lives in a module of its own so that the library never depends on
// another JMESPath implementation. The package holds only tests and
// benchmarks:
//
//	go test ./...                                        # both engines agree
//	go test -run '^$' -bench . -benchmem -count 5        # timings
//
// Sub-benchmarks are named case=<case>/engine=<engine>, so that
// `benchstat -col /engine` puts the two engines side by side. Results are
// recorded in docs/benchmarks.md.
package bench
