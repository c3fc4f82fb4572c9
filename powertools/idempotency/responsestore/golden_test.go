package responsestore_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/testing/golden"
	"github.com/gopowertools/lambda/internal/testing/testenv"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// The golden records of this package: DynamoDB items whose response the
// store compressed, encrypted or offloaded to S3, in testdata/golden,
// with the object an offloaded response points to. Each is written by one
// invocation at the golden clock (internal/testing/golden) and read back by a
// duplicate.

// goldenRecord is a golden file: the item, as the DynamoDB golden files
// hold one, and the object it points to, if any.
type goldenRecord struct {
	Item   json.RawMessage `json:"item"`
	Object *goldenObject   `json:"object,omitempty"`
}

type goldenObject struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	Body   []byte `json:"body"` // base64
}

// goldenBucket is the bucket of every golden object; the envelope names
// it.
const goldenBucket = "golden-responses"

// The keys of the golden encryption: with them the files decrypt on any
// run, where a KMS key made by moto would not outlive its server.
var (
	goldenKMSMaster = bytes.Repeat([]byte{0x4b}, 32)
	goldenAEADKey   = bytes.Repeat([]byte{0xae}, 32)
)

func goldenKMS() *memKMS { return &memKMS{keyID: "alias/golden", master: newGCM(goldenKMSMaster)} }

// goldenCases are the stores whose records are golden files. An
// encrypted record's ciphertext, and so its object's key and body, holds
// a random nonce and data key: only the rest of it is compared, its
// envelope's header (magic, version, flags) included. So is a gzipped
// one's, whose bytes are the compress/flate of the Go release, not a
// format of ours.
var goldenCases = []struct {
	file   string
	masked bool // the ciphertext or gzip stream is not compared
	opts   func(s3 responsestore.S3Client) []responsestore.Option
}{
	{"completed-s3.json", false, func(c responsestore.S3Client) []responsestore.Option {
		return []responsestore.Option{responsestore.WithS3(c, goldenBucket), responsestore.WithOffloadThreshold(0)}
	}},
	{"completed-gzip.json", true, func(responsestore.S3Client) []responsestore.Option {
		return []responsestore.Option{responsestore.WithCompression(0)}
	}},
	{"completed-kms.json", true, func(responsestore.S3Client) []responsestore.Option {
		return []responsestore.Option{responsestore.WithKMS(goldenKMS(), "alias/golden")}
	}},
	{"completed-aead.json", true, func(responsestore.S3Client) []responsestore.Option {
		return []responsestore.Option{responsestore.WithAEAD(newGCM(goldenAEADKey))}
	}},
	{"completed-gzip-kms-s3.json", true, func(c responsestore.S3Client) []responsestore.Option {
		return []responsestore.Option{responsestore.WithCompression(0), responsestore.WithKMS(goldenKMS(), "alias/golden"),
			responsestore.WithS3(c, goldenBucket), responsestore.WithOffloadThreshold(0)}
	}},
}

// objects records the objects a store writes to S3.
type objects struct {
	responsestore.S3Client
	puts []goldenObject
}

func (o *objects) PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	body, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, err
	}
	o.puts = append(o.puts, goldenObject{aws.ToString(in.Bucket), aws.ToString(in.Key), body})
	in.Body = bytes.NewReader(body)
	return o.S3Client.PutObject(ctx, in, optFns...)
}

// goldenMoto returns a client of moto's S3 with the golden bucket, and
// the golden table's options.
func goldenMoto(t *testing.T) (s3c *s3.Client, table func(*dynamo.Options)) {
	t.Helper()
	m := newMoto(t)
	_, err := m.s3.CreateBucket(t.Context(), &s3.CreateBucketInput{Bucket: aws.String(goldenBucket)})
	if _, owned := errors.AsType[*s3types.BucketAlreadyOwnedByYou](err); err != nil && !owned {
		t.Fatal(err)
	}
	return m.s3, func(o *dynamo.Options) { o.TableName = m.table }
}

func goldenStore(t *testing.T, inner idempotency.Store, opts []responsestore.Option) idempotency.Store {
	t.Helper()
	s, err := responsestore.New(inner, append(opts, responsestore.WithFunctionName("golden"))...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var goldenOpts = []idempotency.Option{idempotency.WithEventKey("order_id")}

// goldenResponse is the response to the order id: ten receipts, which
// gzip makes smaller.
func goldenResponse(id string) string {
	return "[" + strings.Repeat(golden.Receipt(id)+",", 9) + golden.Receipt(id) + "]"
}

// TestGoldenWrite: for the same event, clock and lease token, this
// version writes the records of testdata/golden: byte for byte, or but
// for the ciphertext and gzip stream (-update rewrites them).
func TestGoldenWrite(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "golden")
	s3c, table := goldenMoto(t)
	for _, c := range goldenCases {
		t.Run(c.file, func(t *testing.T) {
			var wire golden.Wire
			inner, err := dynamo.New(testenv.DynamoDB(t, testenv.MotoEnv, wire.Option), table)
			if err != nil {
				t.Fatal(err)
			}
			objs := &objects{S3Client: s3c}
			store := goldenStore(t, inner, c.opts(objs))
			event := golden.Order("ord-"+c.file, 12.5)
			golden.Seed(t)
			if _, _, err := golden.Invoke(store, event, golden.Respond(goldenResponse("ord-"+c.file)), goldenOpts...); err != nil {
				t.Fatal(err)
			}
			items := wire.Items(t)
			if len(items) != 2 || len(objs.puts) > 1 {
				t.Fatalf("the invocation wrote %d items and %d objects, want 2 and at most 1", len(items), len(objs.puts))
			}
			rec := goldenRecord{Item: items[1]} // the COMPLETE record
			if len(objs.puts) == 1 {
				rec.Object = &objs.puts[0]
			}
			got := golden.Marshal(t, rec)
			if !c.masked {
				golden.Check(t, c.file, got)
				return
			}
			if golden.Updating() {
				// A file that differs only in its random parts stays as
				// it is: -update rewrites only what changed.
				if old, err := golden.Stored(c.file); err != nil || !bytes.Equal(mask(t, old), mask(t, got)) {
					golden.Write(t, c.file, got)
				}
				return
			}
			golden.Compare(t, c.file+", but for the ciphertext or gzip stream,", mask(t, golden.Read(t, c.file)), mask(t, got))
		})
	}
}

// mask returns the golden record b with its ciphertext or gzip stream
// left out: the data attribute holds only the envelope's header, and the
// object only its bucket.
func mask(t *testing.T, b []byte) []byte {
	t.Helper()
	var rec struct {
		Item   map[string]json.RawMessage `json:"item"`
		Object *goldenObject              `json:"object,omitempty"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	var data struct{ B []byte }
	if err := json.Unmarshal(rec.Item["data"], &data); err != nil || len(data.B) < 6 {
		t.Fatalf("data is not an envelope: %s (%v)", rec.Item["data"], err)
	}
	rec.Item["data"] = golden.Marshal(t, map[string]string{"envelope header": hex.EncodeToString(data.B[:6])})
	if rec.Object != nil {
		rec.Object.Key, rec.Object.Body = "", nil
	}
	return golden.Marshal(t, rec)
}

// TestGoldenRead: each record of testdata/golden, its item put in a table
// and its object in the bucket as the file holds them, gives a duplicate
// the replay of its response.
func TestGoldenRead(t *testing.T) {
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "golden")
	var read []string
	for _, c := range goldenCases {
		read = append(read, c.file)
	}
	golden.CheckRead(t, read)
	s3c, table := goldenMoto(t)
	var o dynamo.Options
	table(&o)
	endpoint := testenv.Endpoint(t, testenv.MotoEnv)
	inner, err := dynamo.New(testenv.DynamoDB(t, testenv.MotoEnv), table)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range goldenCases {
		var rec goldenRecord
		if err := json.Unmarshal(golden.Read(t, c.file), &rec); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if rec.Object != nil {
			if _, err := s3c.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(rec.Object.Bucket), Key: aws.String(rec.Object.Key), Body: bytes.NewReader(rec.Object.Body)}); err != nil {
				t.Fatal(err)
			}
		}
		golden.PutItem(t, endpoint, o.TableName, rec.Item)
		store := goldenStore(t, inner, c.opts(s3c))
		id := "ord-" + c.file
		if got, want := golden.Duplicate(store, golden.Order(id, 12.5), goldenOpts...), golden.Replay(goldenResponse(id)); got != want {
			t.Errorf("%s: a duplicate got\n\t%s\nwant\n\t%s", c.file, got, want)
		}
	}
}
