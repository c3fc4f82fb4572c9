package strictjson

import (
	"os"
	"testing"
)

// BenchmarkFind is the key search of the middleware's benchmark on its
// 2.2 KB API Gateway event: the whole event validated, the body decoded,
// the order id selected.
func BenchmarkFind(b *testing.B) {
	event, err := os.ReadFile("../../powertools/idempotency/testdata/apigw-v2-event.json")
	if err != nil {
		b.Fatal(err)
	}
	path := []Step{{Kind: Member, Name: "body"}, {Kind: Document}, {Kind: Member, Name: "order_id"}}
	b.SetBytes(int64(len(event)))
	for b.Loop() {
		if _, err := Find(event, path); err != nil {
			b.Fatal(err)
		}
	}
}
