package strictjson

import (
	"os"
	"testing"
)

// The middleware's benchmark reads its 2.2 KB API Gateway event.
func readEvent(b *testing.B) []byte {
	event, err := os.ReadFile("../../powertools/idempotency/testdata/apigw-v2-event.json")
	if err != nil {
		b.Fatal(err)
	}
	return event
}

// BenchmarkFind is the key search of the middleware's benchmark on its
// event: the whole event validated, the body decoded, the order id
// selected.
func BenchmarkFind(b *testing.B) {
	event := readEvent(b)
	path := []Step{{Kind: Member, Name: "body"}, {Kind: Document}, {Kind: Member, Name: "order_id"}}
	b.SetBytes(int64(len(event)))
	for b.Loop() {
		if _, err := Find(event, nil, path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFindAll is the middleware's search per invocation: the key
// path and the three paths of the validation expression
// powertools_json(body).[amount,currency].
func BenchmarkFindAll(b *testing.B) {
	event := readEvent(b)
	doc := []Step{{Kind: Member, Name: "body"}, {Kind: Document}}
	paths := [][]Step{
		append(doc[:2:2], Step{Kind: Member, Name: "order_id"}),
		append(doc[:2:2], Step{Kind: Type}),
		append(doc[:2:2], Step{Kind: Member, Name: "amount"}),
		append(doc[:2:2], Step{Kind: Member, Name: "currency"}),
	}
	b.SetBytes(int64(len(event)))
	for b.Loop() {
		if _, err := FindAll(event, nil, paths...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSkip validates the event without selecting anything: the
// floor under Find.
func BenchmarkSkip(b *testing.B) {
	event := readEvent(b)
	b.SetBytes(int64(len(event)))
	for b.Loop() {
		s, err := newScanner(event, false, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.space()
		if err := s.skip(); err != nil {
			b.Fatal(err)
		}
		if err := s.end(); err != nil {
			b.Fatal(err)
		}
	}
}
