package bench

import (
	"testing"

	"github.com/gopowertools/lambda/jmespath"
)

// Engines are the sub-benchmark names benchstat pivots on (-col /engine).
const (
	engineOurs   = "engine=gopowertools"
	engineTheirs = "engine=go-jmespath"
)

// forEachCase runs run as a sub-benchmark for each Lambda case, then for
// each of the compliance suite's bench cases (one skipped sub-benchmark when
// the suite is absent).
func forEachCase(b *testing.B, run func(b *testing.B, c benchCase)) {
	for _, c := range lambdaCases(b) {
		b.Run("case="+c.name, func(b *testing.B) { run(b, c) })
	}
	cases, err := complianceCases()
	if err != nil {
		b.Run("case=compliance", func(b *testing.B) { skipWithoutCompliance(b, err) })
		return
	}
	for _, c := range cases {
		b.Run("case="+c.name, func(b *testing.B) { run(b, c) })
	}
}

// BenchmarkCompile measures parsing an expression, which a handler does
// once at cold start.
func BenchmarkCompile(b *testing.B) {
	forEachCase(b, func(b *testing.B, c benchCase) {
		b.Run(engineOurs, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jmespath.Compile(c.ours); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(engineTheirs, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := compileTheirs(c.theirs); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkSearch measures a precompiled expression on a decoded document,
// which a handler does on every invocation.
func BenchmarkSearch(b *testing.B) {
	forEachCase(b, func(b *testing.B, c benchCase) {
		b.Run(engineOurs, func(b *testing.B) {
			expr := mustCompileOurs(b, c.ours)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := expr.Search(c.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(engineTheirs, func(b *testing.B) {
			steps := mustCompileTheirs(b, c.theirs)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := steps.search(c.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkCompileSearch measures both together, as a one-off query does.
func BenchmarkCompileSearch(b *testing.B) {
	forEachCase(b, func(b *testing.B, c benchCase) {
		b.Run(engineOurs, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				expr, err := jmespath.Compile(c.ours)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := expr.Search(c.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(engineTheirs, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				steps, err := compileTheirs(c.theirs)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := steps.search(c.doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkSearchRaw starts from the event's bytes, as a Lambda handler
// does: our engine's SearchJSON against decoding the whole event with
// encoding/json and searching it with go-jmespath.
func BenchmarkSearchRaw(b *testing.B) {
	for _, c := range lambdaCases(b) {
		b.Run("case="+c.name, func(b *testing.B) {
			b.Run(engineOurs, func(b *testing.B) {
				expr := mustCompileOurs(b, c.ours)
				b.SetBytes(int64(len(c.raw)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := expr.SearchJSON(c.raw); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(engineTheirs, func(b *testing.B) {
				steps := mustCompileTheirs(b, c.theirs)
				b.SetBytes(int64(len(c.raw)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := steps.searchRaw(c.raw); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

func mustCompileOurs(tb testing.TB, expr string) *jmespath.Expression {
	tb.Helper()
	e, err := jmespath.Compile(expr)
	if err != nil {
		tb.Fatalf("Compile(%q): %v", expr, err)
	}
	return e
}

func mustCompileTheirs(tb testing.TB, exprs []string) theirSteps {
	tb.Helper()
	s, err := compileTheirs(exprs)
	if err != nil {
		tb.Fatalf("go-jmespath Compile(%q): %v", exprs, err)
	}
	return s
}
