package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/redis"
)

// This file is a Redis or Valkey deployment behind the real redis.Store
// and go-redis: each sandbox's function builds a go-redis client, as
// ClientFromEnv does (ContextTimeoutEnabled), whose Dialer hands it an
// in-process connection to the modelled server, and gives it to
// redis.New with the plan's WaitReplicas. The scripts run on the primary
// with gopher-lua. The deployment:
//
//   - a primary with one replica, replicated asynchronously and in order
//     (https://redis.io/docs/latest/operate/oss_and_stack/management/replication/):
//     a script's writes reach the replica as its effects, after the
//     primary has answered;
//   - a key's TTL counts down on the server's clock (the world's), and
//     the server deletes the key when it is next touched after it;
//   - a failover (a plan's outage) promotes the replica: everything it
//     had not received is lost, the connections to the old primary are
//     closed, requests during the failover find the endpoint closed, and
//     the new primary's script cache is empty (go-redis then gets
//     NOSCRIPT and sends EVAL);
//   - WAIT numreplicas timeout (https://redis.io/docs/latest/commands/wait/)
//     answers once the replica has the connection's last write, or with
//     0 at the timeout.

// replWrite is a write on its way to the replica.
type replWrite struct {
	key     string
	h       *redisHash // nil: a delete
	arrival time.Time
}

type redisWorld struct {
	w         *world
	primary   *redisServer
	replica   map[string]*redisHash
	backlog   []*replWrite
	failingTo time.Time // requests fail until then: a failover under way
	conns     []*redisConn

	// While a request runs at the primary: whose it is, on which
	// connection.
	caller *invocation
	conn   *redisConn
}

func newRedisWorld() *redisWorld {
	return &redisWorld{replica: map[string]*redisHash{}}
}

// redisKeyPrefix is the store's KeyPrefix, which the checker strips to
// name a record by its idempotency key.
const redisKeyPrefix = redis.DefaultKeyPrefix

// waitTimeout is the simulated function's WaitTimeout.
const waitTimeout = 100 * time.Millisecond

func (r *redisWorld) newStore(w *world, sb *sandbox) (idempotency.Store, error) {
	client := goredis.NewClient(&goredis.Options{
		Addr:   redisAddr.String(),
		Dialer: func(context.Context, string, string) (net.Conn, error) { return &redisConn{r: r, sb: sb}, nil },
		// As ClientFromEnv makes it.
		ContextTimeoutEnabled: true,
		// go-redis draws its backoff between retries from math/rand's
		// process-wide source, which no seed sets: with it, a schedule
		// would not replay. Each retry still costs its round trips.
		MinRetryBackoff: -1,
		// Buffers of 4 KiB, not 32 and 128: their size changes how many
		// reads a reply takes, not what it says, and clearing 320 KiB for
		// each new connection was a fifth of a Redis schedule's time.
		ReadBufferSize:          4096,
		WriteBufferSize:         4096,
		PipelineReadBufferSize:  4096,
		PipelineWriteBufferSize: 4096,
		// The modelled server refuses CLIENT MAINT_NOTIFICATIONS, as a
		// server without them does, and the default mode then turns them
		// off; off from the start, the client does not build their
		// machinery for every sandbox.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	store, err := redis.New(client, func(o *redis.Options) {
		o.WaitReplicas = w.cfg.redisWait
		o.WaitTimeout = waitTimeout
	})
	if err != nil {
		return nil, err
	}
	return &failures{Store: store, sb: sb}, nil
}

// failures notes, for the checker, whether an invocation's last store
// call failed: its verdict then rests on an older read.
type failures struct {
	idempotency.Store
	sb *sandbox
}

func (f *failures) note(err error) error {
	f.sb.current.storeFailed = err != nil && !errors.Is(err, idempotency.ErrLeaseLost) && !errors.Is(err, idempotency.ErrRecordNotFound)
	return err
}

func (f *failures) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	existing, err := f.Store.Acquire(ctx, rec, now)
	return existing, f.note(err)
}

func (f *failures) Complete(ctx context.Context, rec *idempotency.Record) error {
	return f.note(f.Store.Complete(ctx, rec))
}

func (f *failures) MarkUncertain(ctx context.Context, rec *idempotency.Record) error {
	return f.note(f.Store.MarkUncertain(ctx, rec))
}

func (f *failures) Release(ctx context.Context, key, token string) error {
	return f.note(f.Store.Release(ctx, key, token))
}

func (f *failures) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	return f.note(f.Store.Reclaim(ctx, rec, token))
}

func (f *failures) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	rec, err := f.Store.Get(ctx, key)
	return rec, f.note(err)
}

func (r *redisWorld) start(w *world) {
	r.w = w
	r.newPrimary(map[string]*redisHash{})
	for _, o := range w.plan.outages {
		w.s.at(epoch.Add(o.at), r.failover)
	}
}

// newPrimary makes the primary's server on data: its writes go to the
// checker and to the replica, its expiries to the checker.
func (r *redisWorld) newPrimary(data map[string]*redisHash) {
	w := r.w
	srv := newRedisServer(data, func() time.Time { return w.s.now })
	srv.expired = func(key string, h *redisHash) {
		w.check.deleted(strings.TrimPrefix(key, redisKeyPrefix), recViewOfHash(h))
	}
	srv.written = func(key string, before, after *redisHash) {
		rw := r.replicateLater(key, after.clone())
		if r.conn != nil {
			r.conn.lastWrite = rw
		}
		if !before.equal(after) {
			w.check.wrote(r.caller, strings.TrimPrefix(key, redisKeyPrefix), recViewOfHash(before), recViewOfHash(after), 0)
		}
	}
	r.primary = srv
}

// send puts the commands of one request of c on their way, from the
// invocation running in c's sandbox; its process may crash before it is
// sent or while it travels (it is applied all the same).
func (r *redisWorld) send(c *redisConn, cmds [][]string) {
	w := r.w
	inv := c.sb.current
	inv.task.alive() // nothing is sent from a dead process: its deferred release unwinds
	w.step(inv)
	inv.steps++
	there, back := latency(inv.rng, 0, 2), latency(inv.rng, 0, 2)
	if inv.steps == inv.crashAt {
		w.s.after(there, func() { w.die(inv, "crashes, its request on its way") })
	}
	f := faultNone
	if !inv.quiet {
		switch x := inv.rng.Float64(); {
		case x < w.cfg.replyLost:
			f = faultReplyLost
		case x < w.cfg.replyLost+w.cfg.slowReply:
			f = faultSlow
			back += latency(inv.rng, 100, 1000)
		}
	}
	back = max(back, time.Microsecond)
	answers := make([]*answer, len(cmds))
	for i := range answers {
		answers[i] = &answer{readyAt: w.s.now.Add(there + back)}
	}
	c.pending = append(c.pending, answers...)
	closeWith := error(io.EOF)
	if f == faultReplyLost && inv.rng.IntN(2) == 0 {
		closeWith = errReset // a reset, which go-redis does not retry; a close, which it does
	}
	w.s.after(there, func() { r.arrive(inv, c, cmds, answers, back, f, closeWith) })
}

// arrive runs a request at the server it reaches.
func (r *redisWorld) arrive(inv *invocation, c *redisConn, cmds [][]string, answers []*answer, back time.Duration, f fault, closeWith error) {
	w := r.w
	now := w.s.now
	what := strings.ToUpper(cmds[len(cmds)-1][0])
	if len(cmds) > 1 {
		what = strings.ToUpper(cmds[0][0]) + "+" + what
	}
	if now.Before(r.failingTo) || (c.srv != nil && c.srv != r.primary) {
		c.brk(now.Add(back), io.EOF)
		w.inject(inv, "redis %s: the connection closed by the failover", what)
		if w.trace != nil {
			w.trace.log(inv, "redis %s: the connection is closed (failover)", what)
		}
		return
	}
	if c.srv == nil {
		c.srv = r.primary
		r.conns = append(r.conns, c)
	}
	r.caller, r.conn = inv, c
	var answerErr error
	for i, args := range cmds {
		a := answers[i]
		if strings.EqualFold(args[0], "wait") && len(args) == 3 {
			n, at := r.wait(c, args[2])
			if n == 0 {
				w.inject(inv, "redis WAIT: the replica lags beyond the timeout")
			}
			a.b = appendResp(nil, intReply(n), c.state.proto)
			a.readyAt = at.Add(back)
			continue
		}
		rep := r.primary.exec(&c.state, args)
		if rep.isError() && answerErr == nil {
			answerErr = errors.New(rep.errorPrefix())
		}
		a.b = appendResp(nil, rep, c.state.proto)
	}
	r.caller, r.conn = nil, nil
	if f == faultReplyLost {
		c.brk(now.Add(back), closeWith)
	}
	if f != faultNone {
		w.inject(inv, "redis %s %s: %s", what, keyOfCommand(cmds), outcomeText(f, answerErr))
	}
	if w.trace != nil {
		w.trace.log(inv, "redis %s %s: %s", what, keyOfCommand(cmds), outcomeText(f, answerErr))
	}
}

// wait is WAIT's answer for c: how many replicas have its last write,
// and when that is known.
func (r *redisWorld) wait(c *redisConn, timeoutMS string) (int64, time.Time) {
	now := r.w.s.now
	rw := c.lastWrite
	if rw == nil || !rw.arrival.After(now) {
		return 1, now
	}
	ms, _ := strconv.ParseInt(timeoutMS, 10, 64)
	if limit := now.Add(time.Duration(ms) * time.Millisecond); ms > 0 && rw.arrival.After(limit) {
		return 0, limit
	}
	return 1, rw.arrival
}

// keyOfCommand is the record a request is about, for the trace.
func keyOfCommand(cmds [][]string) string {
	for _, args := range cmds {
		if len(args) > 3 && (strings.EqualFold(args[0], "evalsha") || strings.EqualFold(args[0], "eval")) {
			return short(strings.TrimPrefix(args[3], redisKeyPrefix))
		}
	}
	return ""
}

// replicateLater puts a write on its way to the replica, after the
// writes before it.
func (r *redisWorld) replicateLater(key string, h *redisHash) *replWrite {
	w := r.w
	lag := time.Duration(100+w.s.rng.IntN(4900)) * time.Microsecond
	if w.s.rng.IntN(50) == 0 {
		lag = time.Duration(100+w.s.rng.IntN(2000)) * time.Millisecond
	}
	arrival := w.s.now.Add(lag)
	if n := len(r.backlog); n > 0 && arrival.Before(r.backlog[n-1].arrival) {
		arrival = r.backlog[n-1].arrival
	}
	rw := &replWrite{key: key, h: h, arrival: arrival}
	r.backlog = append(r.backlog, rw)
	w.s.at(arrival, r.replicate)
	return rw
}

// replicate applies, in order, the writes that have reached the replica
// by now (a failover has dropped those it lost from the backlog).
func (r *redisWorld) replicate() {
	now := r.w.s.now
	for len(r.backlog) > 0 && !r.backlog[0].arrival.After(now) {
		x := r.backlog[0]
		r.backlog = r.backlog[1:]
		if x.h == nil {
			delete(r.replica, x.key)
		} else {
			r.replica[x.key] = x.h
		}
	}
}

// failover promotes the replica: what it had not received is gone, and
// the connections to the old primary are closed.
func (r *redisWorld) failover() {
	w := r.w
	took := time.Duration(1000+w.s.rng.IntN(9000)) * time.Millisecond
	r.failingTo = w.s.now.Add(took)
	lost := map[string]excuse{}
	var keys []string
	tokens := map[string][]string{} // the tokens the lost writes carried, by key
	for _, x := range r.backlog {
		if v := recViewOfHash(x.h); v != nil {
			tokens[x.key] = append(tokens[x.key], v.token)
		}
		// Without WAIT, asynchronous replication is the documented limit
		// (docs/redis.md): a write, acknowledged or read by another
		// client, can be lost. With it, no excuse: only the writes no
		// client was told were made may be lost, and the checker finds
		// any other by what it leads to.
		ex, seen := lost[x.key]
		if !seen {
			keys = append(keys, x.key)
		}
		if w.cfg.redisWait == 0 {
			ex = excuse{limitRedisFailover, fmt.Sprintf("the Redis failover at %s lost the writes its replica had not received", w.at(w.s.now))}
		}
		lost[x.key] = ex
	}
	if w.trace != nil {
		w.trace.log(nil, "the Redis primary fails over to its replica (%d writes lost, %v to recover)", len(r.backlog), took)
	}
	r.backlog = nil
	for _, c := range r.conns {
		c.brk(w.s.now, io.EOF)
	}
	r.conns = nil
	data := make(map[string]*redisHash, len(r.replica))
	for k, h := range r.replica {
		data[k] = h.clone()
	}
	r.newPrimary(data)
	for _, key := range keys {
		var now *recView
		if h := r.primary.data[key]; h != nil && h.expireAt.After(w.s.now) {
			now = recViewOfHash(h)
		}
		w.check.reverted(strings.TrimPrefix(key, redisKeyPrefix), now, tokens[key], lost[key])
	}
}

// recViewOfHash reads a record's hash as docs/redis.md describes its
// fields: the checker's own reading, not the store's.
func recViewOfHash(h *redisHash) *recView {
	if h == nil {
		return nil
	}
	v := &recView{deleteAt: h.expireAt}
	at := func(s string, unit time.Duration) time.Time {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}
		}
		return time.Unix(0, 0).Add(time.Duration(n) * unit).UTC()
	}
	for i := 0; i+1 < len(h.fields); i += 2 {
		val := h.fields[i+1]
		switch h.fields[i] {
		case "status":
			v.status = idempotency.Status(val)
		case "lease_token":
			v.token = val
		case "expiration":
			v.expiry = at(val, time.Second)
		case "in_progress_expiration":
			v.leaseEnd = at(val, time.Millisecond)
		case "invocation_deadline":
			v.deadline = at(val, time.Millisecond)
		case "data":
			v.response = []byte(val)
		case "response_omitted":
			v.omitted = val == "1"
		case "validation":
			v.hash = val
		}
	}
	return v
}
