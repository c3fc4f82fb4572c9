package responsestore_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// BenchmarkAddedCost measures what the store adds to the two calls that
// carry a response: the COMPLETE write (write) and the read of a COMPLETE
// record (read, as a duplicate's Acquire or Get makes it), over the
// in-memory store, by response size and option. S3 and KMS are the
// in-memory fakes, so the figures are the CPU cost; the requests each call
// sends are reported per operation (s3-req/op, kms-req/op), and
// a benchmark on moto times them. The KMS data key is cached, as
// it is for all but one call in maxUses (default 2^32) or per maxAge (5
// minutes); kms-req/op counts the misses.
func BenchmarkAddedCost(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		resp := benchJSON(size)
		for _, c := range benchConfigs() {
			for _, path := range []string{"write", "read"} {
				b.Run(fmt.Sprintf("%dKiB/%s/%s", size>>10, c.name, path), func(b *testing.B) {
					s3, k := newMemS3(), newMemKMS("key-1")
					inner := idempotencytest.NewStore()
					inner.SetMaxItemSize(-1)
					s := mustNew(b, inner, c.opts(s3, k)...)
					rec := completeOne(b, s, "orders#bench", resp)
					puts0, gets0 := s3.counts()
					gen0, dec0 := k.counts()
					b.SetBytes(int64(len(resp)))
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						switch path {
						case "write":
							if err := s.Complete(context.Background(), rec); err != nil {
								b.Fatal(err)
							}
						case "read":
							if _, err := s.Get(context.Background(), "orders#bench"); err != nil {
								b.Fatal(err)
							}
						}
					}
					b.StopTimer()
					puts, gets := s3.counts()
					gen, dec := k.counts()
					b.ReportMetric(float64(puts-puts0+gets-gets0)/float64(b.N), "s3-req/op")
					b.ReportMetric(float64(gen-gen0+dec-dec0)/float64(b.N), "kms-req/op")
					b.ReportMetric(float64(len(stored(b, inner, "orders#bench"))), "stored-bytes")
				})
			}
		}
	}
}

type benchConfig struct {
	name string
	opts func(*memS3, *memKMS) []responsestore.Option
}

func benchConfigs() []benchConfig {
	fn := responsestore.WithFunctionName("orders")
	return []benchConfig{
		{"inner-only", func(*memS3, *memKMS) []responsestore.Option { return nil }},
		{"gzip", func(*memS3, *memKMS) []responsestore.Option {
			return []responsestore.Option{responsestore.WithCompression(1024)}
		}},
		{"kms", func(_ *memS3, k *memKMS) []responsestore.Option {
			return []responsestore.Option{responsestore.WithKMS(k, "key-1"), fn}
		}},
		{"gzip+kms", func(_ *memS3, k *memKMS) []responsestore.Option {
			return []responsestore.Option{responsestore.WithCompression(1024), responsestore.WithKMS(k, "key-1"), fn}
		}},
		{"s3", func(s3 *memS3, _ *memKMS) []responsestore.Option {
			return []responsestore.Option{responsestore.WithS3(s3, "b"), responsestore.WithOffloadThreshold(0)}
		}},
		{"gzip+kms+s3", func(s3 *memS3, k *memKMS) []responsestore.Option {
			return []responsestore.Option{responsestore.WithCompression(1024), responsestore.WithKMS(k, "key-1"), fn,
				responsestore.WithS3(s3, "b"), responsestore.WithOffloadThreshold(0)}
		}},
	}
}

// BenchmarkMotoRequests times the requests the store sends, one of each
// per iteration, on moto over loopback: what they cost the CPU of both
// ends here, not what they take in AWS, where the network round trip
// dominates.
func BenchmarkMotoRequests(b *testing.B) {
	url := testenv.Endpoint(b, testenv.MotoEnv)
	ctx := context.Background()
	s3c, kc := newS3(url, nil), newKMS(url, nil)
	bucket := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	if _, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		b.Fatal(err)
	}
	key, err := kc.CreateKey(ctx, &kms.CreateKeyInput{})
	if err != nil {
		b.Fatal(err)
	}
	ec := map[string]string{responsestore.EncryptionContextKey: "orders"}
	for _, size := range []int{64 << 10, 1 << 20} {
		body := jsonOf(size, true)
		b.Run(fmt.Sprintf("PutObject/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("k"), Body: bytes.NewReader(body),
					ChecksumAlgorithm: types.ChecksumAlgorithmSha256}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("GetObject/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				out, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("k")})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, out.Body); err != nil {
					b.Fatal(err)
				}
				out.Body.Close()
			}
		})
	}
	b.Run("GenerateDataKey", func(b *testing.B) {
		for b.Loop() {
			if _, err := kc.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: key.KeyMetadata.KeyId, NumberOfBytes: aws.Int32(32), EncryptionContext: ec}); err != nil {
				b.Fatal(err)
			}
		}
	})
	dk, err := kc.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: key.KeyMetadata.KeyId, NumberOfBytes: aws.Int32(32), EncryptionContext: ec})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Decrypt", func(b *testing.B) {
		for b.Loop() {
			if _, err := kc.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: dk.CiphertextBlob, KeyId: key.KeyMetadata.KeyId, EncryptionContext: ec}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGzipLevel compares gzip's levels on JSON responses, the
// measurement behind gzipLevel: time per byte, and the compressed size
// (ratio, in percent of the input).
func BenchmarkGzipLevel(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		in := benchJSON(size)
		for _, level := range []int{gzip.BestSpeed, gzip.DefaultCompression, gzip.BestCompression} {
			b.Run(fmt.Sprintf("%dKiB/level%d", size>>10, level), func(b *testing.B) {
				var buf bytes.Buffer
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					buf.Reset()
					zw, _ := gzip.NewWriterLevel(&buf, level)
					zw.Write(in)
					zw.Close()
				}
				b.ReportMetric(100*float64(buf.Len())/float64(len(in)), "%size")
			})
		}
	}
}

// benchJSON is an API-like JSON document of about n bytes: an order list
// with ids, amounts, timestamps and free text.
func benchJSON(n int) []byte {
	type line struct {
		SKU      string `json:"sku"`
		Quantity int    `json:"quantity"`
		Cents    int    `json:"cents"`
	}
	type order struct {
		ID       string `json:"id"`
		Customer string `json:"customer"`
		Created  string `json:"created"`
		Note     string `json:"note"`
		Lines    []line `json:"lines"`
	}
	var orders []order
	size := 0
	for i := 0; size < n; i++ {
		o := order{
			ID:       fmt.Sprintf("ord_%08x", i*2654435761),
			Customer: fmt.Sprintf("cus_%06d", i*7919%1000003),
			Created:  fmt.Sprintf("2026-11-%02dT%02d:%02d:%02dZ", 1+i%28, i%24, i*7%60, i*13%60),
			Note:     []string{"leave at the door", "", "gift wrap, no invoice in the parcel", "call before delivery"}[i%4],
		}
		for j := range 1 + i%4 {
			o.Lines = append(o.Lines, line{SKU: fmt.Sprintf("SKU-%05d", (i*31+j*17)%40000), Quantity: 1 + j, Cents: (i*97 + j*1013) % 50000})
		}
		b, _ := json.Marshal(o)
		size += len(b) + 1
		orders = append(orders, o)
	}
	b, _ := json.Marshal(map[string]any{"orders": orders})
	return b
}
