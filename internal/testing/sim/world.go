package sim

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gopowertools/lambda/dynamo"
	"github.com/gopowertools/lambda/internal/simclock"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/responsestore"
)

// This file is the world the engine runs in: Lambda's sandboxes, each
// with its own process, clock and handler built with the real
// idempotency.New at cold start, and the invocations. The handler's
// downstream, which counts the effects made for each key, is
// [downstream].

// world is one schedule being run.
type world struct {
	plan  *plan
	cfg   *config
	s     *scheduler
	check *checker
	trace *tracer
	store storeModel
	down  *downstream

	idle        [][]*sandbox // per Region: sandboxes waiting for an invocation
	sandboxes   int
	outages     []outage // Regions out now, and since when
	traffic     int      // deliveries not yet settled: the probes wait for none
	probed      bool
	invocations []*invocation
	keys        map[int]string // by order
}

// storeModel is a store's world: it makes the idempotency.Store of each
// new sandbox, and runs its own events (failovers, replication).
type storeModel interface {
	newStore(w *world, sb *sandbox) (idempotency.Store, error)
	start(w *world)
}

// sandbox is a Lambda execution environment: one invocation at a time,
// until its process dies.
type sandbox struct {
	id      int
	region  int
	proc    *process
	clock   *sandboxClock
	handler *idempotency.Handler
	current *invocation
	obs     idempotency.Observation
}

// invocation is one delivery of a request to a sandbox.
type invocation struct {
	id       invocationID
	req      *request
	sb       *sandbox
	task     *task
	rng      *rand.Rand
	quiet    bool
	crashAt  int // the step at which its process dies; 0: none
	steps    int
	start    time.Time
	deadline time.Time
	amount   int
	key      string          // its idempotency key
	settled  func(err error) // tells the request's source how it ended: nil, an error, errDied

	ended, died bool
	endedAt     time.Time
	// The lease it runs under: the token its Acquire (or Reclaim) wrote.
	token      string
	acquiredAt time.Time
	effects    []int // the effects it made (committed, for staged writes)
	succeeded  bool  // its handler returned a result
	// judgedAt is when the engine last read its clock before it
	// answered: the time its verdict on the record is as of.
	judgedAt time.Time
	// storeFailed: its last store request failed (beyond the client's
	// retries), so its verdict rests on an older read.
	storeFailed bool
	// reconciled is the effect its reconcile function found, or 0.
	reconciled int
	// produced is the response its handler, or its reconcile function,
	// made: the receipt as the checker encodes it.
	produced []byte
	// outcome is what it returned, once it has.
	outcome idempotency.Outcome
	// faults are the faults injected into its requests, and death what
	// ended its process: what the checker's excuses name.
	faults []injected
	death  string
	// limit names the documented limit under which its key was taken
	// over from it, or by it, while it still ran: what it returns is then
	// judged under that limit too.
	limit excuse
}

// receipt is the handler's response: the effect that made it, so that two
// runs give different bytes.
type receipt struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
	Effect  int    `json:"effect"`
	Note    string `json:"note,omitempty"`
}

type order struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
}

var (
	errDeclined = errors.New("sim: the downstream declined the order")
	errDied     = errors.New("sim: the invocation's process died")
)

// skewFault names the fault of a sandbox whose clock is ahead.
func (sb *sandbox) skewFault() string {
	return fmt.Sprintf("sandbox %d's clock is %v ahead of the world's", sb.id, sb.clock.skew)
}

// failoverAfter names a Redis failover between since and now, or "".
func (w *world) failoverAfter(since time.Time) string {
	if w.cfg.store != StoreRedis {
		return ""
	}
	for _, o := range w.plan.outages {
		if at := epoch.Add(o.at); !at.Before(since) && !at.After(w.s.now) {
			return fmt.Sprintf("the Redis failover at +%.3fs", o.at.Seconds())
		}
	}
	return ""
}

// keyReused names the requests of the plan that gave order's key to two
// payloads, the client bug behind a reconcile across an expired record,
// or "".
func (w *world) keyReused(order int) string {
	var names []string
	amounts := map[int]bool{}
	for _, q := range w.plan.requests {
		if q.order == order && !amounts[q.amount] {
			amounts[q.amount] = true
			names = append(names, fmt.Sprintf("r%d (amount %d)", q.id, q.amount))
		}
	}
	if len(names) < 2 {
		return ""
	}
	return fmt.Sprintf("requests %s share order o%d's key", strings.Join(names, " and "), order)
}

// simAEAD is the response store's cipher: AES-256-GCM under a fixed key.
var simAEAD = func() cipher.AEAD {
	block, err := aes.NewCipher(make([]byte, 32))
	if err != nil {
		panic(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return aead
}()

// log is where the engine's logs go: nowhere, as fast as possible.
var discard = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))

// sandboxFor returns an idle sandbox of region, or starts one: a cold
// start builds the store and the handler, as a function's init does.
func (w *world) sandboxFor(region int) (*sandbox, error) {
	if n := len(w.idle[region]); n > 0 {
		sb := w.idle[region][n-1]
		w.idle[region] = w.idle[region][:n-1]
		return sb, nil
	}
	w.sandboxes++
	r := rand.New(rand.NewPCG(w.plan.seed, uint64(w.sandboxes)<<32|0xc10c))
	sb := &sandbox{id: w.sandboxes, region: region, proc: &process{}}
	var skew time.Duration
	if w.cfg.maxSkew > 0 {
		skew = time.Duration(r.Int64N(int64(2*w.cfg.maxSkew+1))) - w.cfg.maxSkew
	}
	sb.clock = &sandboxClock{s: w.s, skew: skew}
	store, err := w.store.newStore(w, sb)
	if err != nil {
		return nil, err
	}
	if w.cfg.responseStore {
		if store, err = responsestore.New(store, responsestore.WithCompression(1024), responsestore.WithAEAD(simAEAD),
			responsestore.WithFunctionName("sim")); err != nil {
			return nil, err
		}
	}
	h, err := idempotency.New(store, w.handler(sb), w.functionOptions(sb)...)
	if err != nil {
		return nil, err
	}
	sb.handler = h
	if w.trace != nil {
		w.trace.log(nil, "sandbox %d starts in Region %d, clock skew %v", sb.id, region, skew)
	}
	return sb, nil
}

// functionOptions are the function's settings, as its code would give
// them: the same for every sandbox but the clock.
func (w *world) functionOptions(sb *sandbox) []idempotency.Option {
	c := w.cfg
	opts := []idempotency.Option{
		idempotency.WithKeyPrefix("sim"),
		idempotency.WithEventKey("order_id"),
		idempotency.WithKeyRequired(true),
		idempotency.WithExpiresAfter(c.expiry),
		idempotency.WithAbandonPolicy(c.policy),
		idempotency.WithWaitForInProgress(c.wait),
		idempotency.WithLeaseBeyondDeadline(c.leaseBeyond),
		idempotency.WithClock(sb.clock.now),
		idempotency.WithLogger(discard),
		idempotency.WithObserver(func(_ context.Context, o idempotency.Observation) {
			// The observer's duration is the clock's last read; the one
			// before is when the engine last judged the record.
			sb.obs, sb.current.judgedAt = o, sb.clock.prev
		}),
	}
	if c.validation {
		opts = append(opts, idempotency.WithPayloadValidation("amount"))
	}
	if c.cache > 0 {
		opts = append(opts, idempotency.WithLocalCache(c.cache))
	}
	if c.reconcile {
		opts = append(opts, idempotency.WithReconcile(func(ctx context.Context, key string) (receipt, bool, error) {
			return w.down.lookup(sb.current, key)
		}))
	}
	return opts
}

// invoke delivers q (its delivery n) to a sandbox of region, now.
func (w *world) invoke(q *request, n, region int, settled func(err error)) {
	for _, o := range w.outages {
		if o.region == region && w.cfg.regions > 1 {
			region = (region + 1) % w.cfg.regions // the traffic moves to a Region that is up
		}
	}
	sb, err := w.sandboxFor(region)
	if err != nil {
		w.check.fail("cold start: %v", err)
		return
	}
	id := invocationID{q.id, n}
	inv := &invocation{
		id:       id,
		req:      q,
		sb:       sb,
		rng:      rand.New(rand.NewPCG(w.plan.seed, uint64(q.id)<<16|uint64(n))),
		quiet:    w.plan.quiet[id] || q.id >= probeRequest,
		start:    w.s.now,
		deadline: w.s.now.Add(w.cfg.timeout),
		amount:   q.amount,
		key:      w.keyOf(q.order, sb),
		settled:  settled,
	}
	if !inv.quiet && inv.rng.Float64() < w.cfg.crash {
		inv.crashAt = 1 + inv.rng.IntN(16)
	}
	sb.current = inv
	w.invocations = append(w.invocations, inv)
	if w.trace != nil {
		w.trace.log(inv, "arrives (%s, order %d, amount %d) in sandbox %d, deadline %s", q.source, q.order, q.amount, sb.id, w.at(inv.deadline))
	}
	inv.task = w.s.spawn(sb.proc, func(t *task) { w.run(inv) })
	w.s.at(inv.deadline, func() {
		if !inv.ended {
			w.die(inv, "times out")
		}
	})
}

// keyOf is the idempotency key of order, as the handler computes it.
func (w *world) keyOf(order int, sb *sandbox) string {
	if k, ok := w.keys[order]; ok {
		return k
	}
	k, _, err := sb.handler.KeyOf(fmt.Appendf(nil, `{"order_id":"o%d"}`, order))
	if err != nil {
		w.check.fail("KeyOf: %v", err)
	}
	w.keys[order] = k
	return k
}

// run is the invocation's task: Lambda calls the handler.
func (w *world) run(inv *invocation) {
	ctx := simclock.With(&invocationContext{deadline: inv.deadline},
		&invocationClock{sandbox: inv.sb.clock, task: func() *task { return inv.task }, rng: inv.rng})
	payload := []byte(`{"order_id":"o`)
	payload = strconv.AppendInt(payload, int64(inv.req.order), 10)
	payload = append(payload, `","amount":`...)
	payload = strconv.AppendInt(payload, int64(inv.amount), 10)
	payload = append(payload, '}')
	resp, err := inv.sb.handler.Invoke(ctx, payload)
	inv.ended, inv.endedAt = true, w.s.now
	obs := inv.sb.obs
	inv.outcome = obs.Outcome
	if w.trace != nil {
		w.trace.log(inv, "returns %s", describe(obs.Outcome, resp, err))
	}
	w.check.returned(inv, obs.Outcome, resp, err)
	inv.sb.current = nil
	w.idle[inv.sb.region] = append(w.idle[inv.sb.region], inv.sb)
	inv.settled(err)
}

// die ends inv's process: a crash, or Lambda's timeout.
func (w *world) die(inv *invocation, why string) {
	if inv.ended {
		return
	}
	inv.ended, inv.died, inv.endedAt = true, true, w.s.now
	inv.death = fmt.Sprintf("%v %s at +%.3fs", inv.id, why, w.s.now.Sub(epoch).Seconds())
	if w.trace != nil {
		w.trace.log(inv, "%s: its process dies", why)
	}
	w.check.died(inv)
	inv.settled(errDied)
	w.s.kill(inv.sb.proc)
}

// step is one step of inv: where its process may crash.
func (w *world) step(inv *invocation) {
	inv.steps++
	if inv.steps == inv.crashAt {
		w.die(inv, fmt.Sprintf("crashes at step %d", inv.steps))
		panic(crash{})
	}
}

// call is one request of inv to a server, applied there after there and
// answered after back; its process may crash before sending it or while
// it is on its way (it is applied all the same).
func (w *world) call(inv *invocation, there, back time.Duration, apply func()) {
	w.step(inv)
	inv.steps++
	if inv.steps == inv.crashAt {
		w.s.after(there, func() { w.die(inv, fmt.Sprintf("crashes at step %d, its request on its way", inv.steps)) })
	}
	inv.task.request(there, back, apply)
}

// handler is the function's code, in sandbox sb: it makes its effect
// downstream (or stages it with the record) and returns a receipt.
func (w *world) handler(sb *sandbox) func(context.Context, order) (receipt, error) {
	return func(ctx context.Context, o order) (receipt, error) {
		inv := sb.current
		key, _ := idempotency.KeyFromContext(ctx)
		if w.trace != nil {
			w.trace.log(inv, "handler runs")
		}
		if !inv.quiet && inv.rng.Float64() < w.cfg.handlerError {
			w.injectHandler(inv, "the handler fails before its effect")
			return receipt{}, errDeclined
		}
		var note string
		if inv.rng.Float64() < w.cfg.largeResponse {
			note = strings.Repeat("x", 410*1024) // over DynamoDB's item limit: stored without it
		}
		var n int
		var err error
		if w.cfg.invoker {
			n = w.down.next()
			err = dynamo.Stage(ctx, types.TransactWriteItem{Put: &types.Put{
				TableName: aws.String(effectsTable),
				Item: map[string]types.AttributeValue{
					"id":     &types.AttributeValueMemberS{Value: fmt.Sprintf("%s#%d", key, n)},
					"key":    &types.AttributeValueMemberS{Value: key},
					"effect": &types.AttributeValueMemberN{Value: fmt.Sprint(n)},
					"amount": &types.AttributeValueMemberN{Value: fmt.Sprint(o.Amount)},
				},
			}})
		} else {
			n, err = w.down.effect(inv, key, o.Amount)
		}
		if err != nil {
			return receipt{}, err
		}
		inv.succeeded = true
		r := receipt{OrderID: o.OrderID, Amount: o.Amount, Effect: n, Note: note}
		inv.produced = encode(r)
		return r, nil
	}
}

func latency(r *rand.Rand, lo, hi int) time.Duration {
	return time.Duration(lo*1000+r.IntN((hi-lo)*1000+1)) * time.Microsecond
}

// at writes t as the time since the schedule's start.
func (w *world) at(t time.Time) string { return fmt.Sprintf("+%.3fs", t.Sub(epoch).Seconds()) }

// describe writes what an invocation returned, for the trace.
func describe(o idempotency.Outcome, resp []byte, err error) string {
	if err != nil {
		return fmt.Sprintf("%s: %T: %v", o, err, err)
	}
	r, _ := parseReceipt(resp)
	return fmt.Sprintf("%s: effect %d, amount %d", o, r.Effect, r.Amount)
}

// short abbreviates an idempotency key for the trace.
func short(key string) string {
	if i := strings.IndexByte(key, '#'); i >= 0 && len(key) > i+9 {
		return key[:i+9]
	}
	return key
}
