package sim

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is the DynamoDB client of one sandbox, as the AWS SDK for Go
// behaves to the store: each request travels to its Region's replica and
// back, may be throttled or fail on the server (not applied), may be
// applied and its answer lost, and is attempted three times with backoff
// for the errors the SDK's standard retryer retries (aws/retry:
// throttling codes, 5xx, a broken connection). Its errors have the SDK's
// shapes, which dynamo.Store reads with errors.As.

// dynamoWorld is the store model of the DynamoDB stores: a table in one
// Region, or a global table's replicas.
type dynamoWorld struct {
	w    *world
	mode Store
	// dbs is one database per Region in eventual consistency (MREC),
	// one shared by every Region otherwise (a single table, or strong
	// consistency: MRSC has one latest version of each item).
	dbs []*database
	// lastWrite is, in strong consistency, the last write of each item:
	// a write from another Region meanwhile is a conflict.
	lastWrite map[string]regionWrite
}

type regionWrite struct {
	region int
	at     time.Time
}

func newDynamoWorld(mode Store, regions int) *dynamoWorld {
	d := &dynamoWorld{mode: mode, lastWrite: map[string]regionWrite{}}
	n := 1
	if mode == StoreGlobalEventual {
		n = regions
	}
	for range n {
		d.dbs = append(d.dbs, newDatabase(recordsTable, effectsTable))
	}
	return d
}

func (d *dynamoWorld) db(region int) *database {
	if len(d.dbs) == 1 {
		return d.dbs[0]
	}
	return d.dbs[region]
}

func (d *dynamoWorld) start(w *world) { d.w = w }

func (d *dynamoWorld) newStore(w *world, sb *sandbox) (idempotency.Store, error) {
	return dynamo.New(&dynamoClient{d: d, sb: sb}, func(o *dynamo.Options) {
		o.TableName = recordsTable
		// The simulator shows what the guard refuses (see multi-region.md).
		o.AcceptEventualGlobalTable = d.mode == StoreGlobalEventual
	})
}

// dynamoClient is a sandbox's client: it talks to its Region's endpoint.
type dynamoClient struct {
	d  *dynamoWorld
	sb *sandbox
	// applying is, during a TransactWriteItems attempt, the time the
	// server takes to apply it.
	applying time.Duration
}

// uuid is a version 4 UUID from r, as the SDK's token provider makes one
// from crypto/rand.
func uuid(r *rand.Rand) string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], r.Uint64())
	binary.LittleEndian.PutUint64(b[8:], r.Uint64())
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

var (
	_ dynamo.Client         = (*dynamoClient)(nil)
	_ dynamo.TransactWriter = (*dynamoClient)(nil)
)

func (c *dynamoClient) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	err := c.send("PutItem", true, keysOf(in.Item), func(db *database, now time.Time) ([]change, error) { return db.putItem(in, now) })
	if err != nil {
		return nil, err
	}
	return &dynamodb.PutItemOutput{}, nil
}

func (c *dynamoClient) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	err := c.send("DeleteItem", true, keysOf(in.Key), func(db *database, now time.Time) ([]change, error) { return db.deleteItem(in, now) })
	if err != nil {
		return nil, err
	}
	return &dynamodb.DeleteItemOutput{}, nil
}

func (c *dynamoClient) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	var out *dynamodb.GetItemOutput
	err := c.send("GetItem", false, nil, func(db *database, _ time.Time) ([]change, error) {
		var err error
		out, err = db.getItem(in)
		return nil, err
	})
	return out, err
}

// TransactWriteItems fills in the request's ClientRequestToken, when it
// has none, as the SDK's OperationIdempotencyTokenAutoFill middleware
// does (in the input itself, once per call), so that every attempt of
// the call carries it.
func (c *dynamoClient) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if in.ClientRequestToken == nil {
		in.ClientRequestToken = aws.String(uuid(c.sb.current.rng))
	}
	var keys []string
	for _, ti := range in.TransactItems {
		if ti.Put != nil {
			keys = append(keys, keysOf(ti.Put.Item)...)
		}
	}
	err := c.send("TransactWriteItems", true, keys, func(db *database, now time.Time) ([]change, error) {
		if c.d.mode == StoreGlobalStrong {
			// "Global tables configured for multi-Region strong
			// consistency (MRSC) do not support transaction operations,
			// and will return an error if those operations are invoked
			// on an MRSC replica." (V2globaltables_HowItWorks.html)
			return nil, validation("Transactions are not supported on tables with multi-Region strong consistency")
		}
		// The time the server takes to apply it: its answer leaves then,
		// and its token is in progress until then.
		return db.transactWithToken(in, now, c.applying)
	})
	if err != nil {
		return nil, err
	}
	return &dynamodb.TransactWriteItemsOutput{}, nil
}

func (c *dynamoClient) DescribeTable(_ context.Context, in *dynamodb.DescribeTableInput, _ ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	var out *dynamodb.DescribeTableOutput
	err := c.send("DescribeTable", false, nil, func(db *database, _ time.Time) ([]change, error) {
		if _, err := db.table(in.TableName); err != nil {
			return nil, err
		}
		out = &dynamodb.DescribeTableOutput{Table: c.d.description(aws.ToString(in.TableName))}
		return nil, nil
	})
	return out, err
}

func keysOf(item map[string]types.AttributeValue) []string {
	if s, ok := item[keyAttr].(*types.AttributeValueMemberS); ok {
		return []string{s.Value}
	}
	return nil
}

// fault is what happens to one attempt.
type fault int

const (
	faultNone        fault = iota
	faultThrottle          // 400 ProvisionedThroughputExceededException: not applied
	faultServerError       // 500 InternalServerError: not applied
	faultReplyLost         // applied, the connection reset before the answer
	faultSlow              // applied, the answer late
)

func (c *dynamoClient) fault(inv *invocation) fault {
	if inv.quiet {
		return faultNone
	}
	cfg := c.d.w.cfg
	x := inv.rng.Float64()
	switch {
	case x < cfg.throttle:
		return faultThrottle
	case x < cfg.throttle+cfg.serverError:
		return faultServerError
	case x < cfg.throttle+cfg.serverError+cfg.replyLost:
		return faultReplyLost
	case x < cfg.throttle+cfg.serverError+cfg.replyLost+cfg.slowReply:
		return faultSlow
	}
	return faultNone
}

// sdkAttempts is the standard retryer's attempts.
const sdkAttempts = 3

// send makes a request as the SDK does, attempts and backoff included;
// apply is the request at the server.
func (c *dynamoClient) send(op string, write bool, keys []string, apply func(*database, time.Time) ([]change, error)) error {
	w := c.d.w
	inv := c.sb.current
	region := c.sb.region
	for attempt := 1; ; attempt++ {
		f := c.fault(inv)
		there, back := latency(inv.rng, 1, 8), latency(inv.rng, 1, 8)
		if write && c.d.mode == StoreGlobalStrong {
			there += latency(inv.rng, 20, 60) // written in a second Region before the answer
		}
		if f == faultSlow {
			back += latency(inv.rng, 500, 3000)
		}
		if op == "TransactWriteItems" {
			// A transaction takes the server longer than a single write,
			// now and then much longer.
			c.applying = latency(inv.rng, 5, 50)
			if inv.rng.IntN(20) == 0 {
				c.applying = latency(inv.rng, 100, 2000)
			}
			if f != faultReplyLost {
				// A connection reset comes while the server still
				// applies it; an answer, once it has.
				back += c.applying
			}
		}
		var err error
		w.call(inv, there, back, func() {
			switch {
			case w.regionOut(region):
				err = serverError(&types.InternalServerError{Message: aws.String("the Region is unavailable")}, 500)
			case f == faultThrottle:
				err = serverError(&types.ProvisionedThroughputExceededException{Message: aws.String("throughput exceeded")}, 400)
			case f == faultServerError:
				err = serverError(&types.InternalServerError{Message: aws.String("internal server error")}, 500)
			case write && c.d.conflict(region, keys):
				err = serverError(&types.ReplicatedWriteConflictException{Message: aws.String("the item is being modified in another Region")}, 400)
			default:
				changes, aerr := apply(c.d.db(region), w.s.now)
				switch {
				case errors.Is(aerr, errUnknown):
					w.check.fail("%s: %v", op, aerr)
					err = serverError(validation("%v", aerr), 400)
				case aerr != nil:
					err = serverError(aerr, 400)
				default:
					c.d.applied(inv, region, changes)
				}
			}
			if f != faultNone || (err != nil && w.regionOut(region)) {
				w.inject(inv, "%s %s attempt %d: %s", op, keysText(keys), attempt, outcomeText(f, err))
			}
			if w.trace != nil {
				w.trace.log(inv, "%s %s attempt %d: %s", op, keysText(keys), attempt, outcomeText(f, err))
			}
		})
		if f == faultReplyLost {
			err = &smithyhttp.RequestSendError{Err: errors.New("read tcp: connection reset by peer")}
		}
		if err == nil {
			inv.storeFailed = false
			return nil
		}
		if !retryable(err) || attempt == sdkAttempts {
			var ccf *types.ConditionalCheckFailedException
			inv.storeFailed = !errors.As(err, &ccf)
			if attempt > 1 {
				err = &retry.MaxAttemptsError{Attempt: attempt, Err: err}
			}
			return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: op, Err: err}
		}
		inv.task.sleep(time.Duration(inv.rng.Int64N(int64(50*time.Millisecond) << attempt)))
	}
}

// serverError is an answer of the server, as the SDK hands it over.
func serverError(err error, status int) error {
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err},
		RequestID:     "sim",
	}
}

// retryable is the standard retryer's choice.
func retryable(err error) bool {
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return true
	}
	var resp *awshttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 500 {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		_, throttle := retry.DefaultThrottleErrorCodes[api.ErrorCode()]
		_, other := retry.DefaultRetryableErrorCodes[api.ErrorCode()]
		return throttle || other
	}
	return false
}

// applied is told of the changes a client's request made in region: the
// checker hears of them, a global table replicates them, TTL will sweep
// them.
func (d *dynamoWorld) applied(inv *invocation, region int, changes []change) {
	w := d.w
	slices.SortStableFunc(changes, func(a, b change) int {
		if a.table == b.table {
			return 0
		}
		if a.table == recordsTable {
			return -1
		}
		return 1
	})
	for _, ch := range changes {
		if d.mode == StoreGlobalStrong {
			d.lastWrite[ch.key] = regionWrite{region: region, at: w.s.now}
		}
		switch ch.table {
		case recordsTable:
			w.check.wrote(inv, ch.key, recordOf(ch.before), recordOf(ch.after), region)
			d.sweepLater(region, ch)
		case effectsTable:
			if ch.after == nil {
				continue
			}
			n, _ := strconv.Atoi(ch.after["effect"].(*types.AttributeValueMemberN).Value)
			amount, _ := strconv.Atoi(ch.after["amount"].(*types.AttributeValueMemberN).Value)
			key := ch.after["key"].(*types.AttributeValueMemberS).Value
			inv.effects = append(inv.effects, n)
			if w.trace != nil {
				w.trace.log(inv, "EFFECT %d committed for %s (amount %d)", n, short(key), amount)
			}
			w.check.effect(inv, key, n, amount)
		}
		d.replicate(region, ch)
	}
}

// sweepLater schedules TTL's deletion of a record written with an
// expiry: at the expiry plus up to 48 hours, or within a minute of it
// half the time, so that schedules see both an expired item still there
// and one gone. Strong consistency has no TTL.
func (d *dynamoWorld) sweepLater(region int, ch change) {
	rec := recordOf(ch.after)
	if rec == nil || rec.expiry.IsZero() || d.mode == StoreGlobalStrong {
		return
	}
	w := d.w
	r := w.s.rng
	delay := time.Duration(r.Int64N(int64(time.Minute)))
	if r.IntN(2) == 0 {
		delay = time.Duration(r.Int64N(int64(48 * time.Hour)))
	}
	db := d.db(region)
	w.s.at(rec.expiry.Add(delay), func() {
		it := db.tables[recordsTable][ch.key]
		if it == nil || it.attrs == nil || !it.stamp.Equal(ch.stamp) {
			return // written since: its own sweep will come
		}
		del := change{table: recordsTable, key: ch.key, before: it.attrs, stamp: w.s.now}
		db.tables[recordsTable][ch.key] = &ditem{stamp: w.s.now}
		if w.trace != nil {
			w.trace.log(nil, "TTL deletes %s in Region %d", short(ch.key), region)
		}
		w.check.deleted(ch.key, rec)
		d.replicate(region, del)
	})
}

func keysText(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return short(keys[0])
}

func outcomeText(f fault, err error) string {
	var s string
	switch {
	case err == nil:
		s = "ok"
	default:
		var api smithy.APIError
		if errors.As(err, &api) {
			s = api.ErrorCode()
		} else {
			s = err.Error()
		}
	}
	switch f {
	case faultReplyLost:
		s += ", answer lost"
	case faultSlow:
		s += ", answer late"
	}
	return s
}

// regionOut reports whether region is unreachable now.
func (w *world) regionOut(region int) bool {
	if w.cfg.regions < 2 {
		return false
	}
	for _, o := range w.outages {
		if o.region == region {
			return true
		}
	}
	return false
}
