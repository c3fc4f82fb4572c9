package jmespath

import (
	"testing"
)

func BenchmarkSearchFieldPath(b *testing.B) {
	data, err := decodeStd(apiEvent)
	if err != nil {
		b.Fatal(err)
	}
	e := MustCompile("requestContext.identity.sourceIp")
	b.ReportAllocs()
	for b.Loop() {
		if v, _ := e.Search(data); v == nil {
			b.Fatal("nil")
		}
	}
}

func BenchmarkSearchJSON(b *testing.B) {
	for _, expr := range []string{"requestContext.requestId", "powertools_json(body).order_id", `headers."x-idem"`, "[requestContext.requestId]"} {
		e := MustCompile(expr)
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(apiEvent)))
			for b.Loop() {
				if _, err := e.SearchJSON(apiEvent); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkCompile(b *testing.B) {
	for _, expr := range []string{"requestContext.requestId", "powertools_json(body).order_id",
		"foo[?a == `1` && b.c > `2`].{x: x, y: sort_by(y, &z)[0]} | [0]"} {
		b.Run(expr, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Compile(expr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
