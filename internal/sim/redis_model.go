package sim

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is a Redis or Valkey deployment as redis uses it,
// modelled at the idempotency.Store level (redis's Lua scripts and
// go-redis are not run; differential_test.go checks this model against
// the real redis.Store on Valkey, operation by operation):
//
//   - each operation is one script, atomic on its key, with the scripts'
//     own rules (scripts.go): Acquire writes unless a live record holds
//     the key, on the caller's clock; Complete and Reclaim replace the
//     record under its token; Release deletes it under its token; Get
//     reads it;
//   - the key's TTL is the time left to its expiry on the writer's clock
//     plus a minute, counted by the server (record.go's ttl);
//   - a primary with one replica, replicated asynchronously in order
//     (https://redis.io/docs/latest/operate/oss_and_stack/management/replication/):
//     the primary answers before the replica has the write;
//   - a failover (a plan's outage) promotes the replica and everything
//     it had not yet received is lost; requests fail while it happens,
//     and go-redis sends them again (MaxRetries, 3);
//   - WAIT numreplicas timeout (https://redis.io/docs/latest/commands/wait/),
//     when redis's WaitReplicas asks for it: the write's answer waits
//     until the replica has it, or the timeout, which the store reports as
//     an error.

// replWrite is a write on its way to the replica.
type replWrite struct {
	key      string
	rec      *redisRecord // nil: a delete
	arrival  time.Time
	ackedAt  time.Time // when its client was told it succeeded; zero: not yet
	lostInto *bool     // set when a failover loses it, for its waiting client
}

type redisWorld struct {
	w         *world
	primary   *redisServer
	replica   map[string]*redisRecord
	caller    *invocation // whose script the primary runs
	last      *replWrite  // the write it made
	backlog   []*replWrite
	failingTo time.Time // requests fail until then: a failover under way
}

func newRedisWorld() *redisWorld {
	return &redisWorld{replica: map[string]*redisRecord{}}
}

func (r *redisWorld) newStore(w *world, sb *sandbox) (idempotency.Store, error) {
	return &redisStore{r: r, sb: sb}, nil
}

func (r *redisWorld) start(w *world) {
	r.w = w
	r.newPrimary(map[string]*redisRecord{})
	for _, o := range w.plan.outages {
		w.s.at(epoch.Add(o.at), r.failover)
	}
}

// failover promotes the replica: what it had not received is gone.
func (r *redisWorld) failover() {
	w := r.w
	took := time.Duration(1000+w.s.rng.IntN(9000)) * time.Millisecond
	r.failingTo = w.s.now.Add(took)
	lost := map[string]string{} // key -> label
	for _, x := range r.backlog {
		// Without WAIT, asynchronous replication is the documented limit
		// (docs/redis.md): a write, acknowledged or read by another
		// client, can be lost. With it, only the writes no client was
		// told were made should be.
		label := lost[x.key]
		if w.cfg.redisWait == 0 || (!x.ackedAt.IsZero() && !x.ackedAt.After(w.s.now)) {
			label = limitRedisFailover
		}
		lost[x.key] = label
		if x.lostInto != nil {
			*x.lostInto = true
		}
	}
	if w.trace != nil {
		w.trace.log(nil, "the Redis primary fails over to its replica (%d writes lost, %v to recover)", len(r.backlog), took)
	}
	r.backlog = nil
	r.newPrimary(maps.Clone(r.replica))
	for key, label := range lost {
		var now *recView
		if x := r.primary.data[key]; x != nil && x.expireAt.After(w.s.now) {
			now = viewOf(&x.rec)
		}
		w.check.reverted(key, now, label)
	}
}

// newPrimary makes the primary's server on data: its writes go to the
// checker and to the replica, its expiries to the checker.
func (r *redisWorld) newPrimary(data map[string]*redisRecord) {
	w := r.w
	r.primary = &redisServer{data: data, now: func() time.Time { return w.s.now }}
	r.primary.expired = func(key string, x *redisRecord) { w.check.deleted(key, viewOf(&x.rec)) }
	r.primary.written = func(key string, before, after *redisRecord) {
		var b, a *recView
		if before != nil {
			b = viewOf(&before.rec)
		}
		if after != nil {
			a = viewOf(&after.rec)
		}
		w.check.wrote(r.caller, key, b, a, 0)
		r.last = r.send(key, after)
	}
}

// send puts a write on its way to the replica, after the writes before it.
func (r *redisWorld) send(key string, x *redisRecord) *replWrite {
	w := r.w
	lag := time.Duration(100+w.s.rng.IntN(4900)) * time.Microsecond
	if w.s.rng.IntN(50) == 0 {
		lag = time.Duration(100+w.s.rng.IntN(2000)) * time.Millisecond
	}
	arrival := w.s.now.Add(lag)
	if n := len(r.backlog); n > 0 && arrival.Before(r.backlog[n-1].arrival) {
		arrival = r.backlog[n-1].arrival
	}
	rw := &replWrite{key: key, rec: x, arrival: arrival}
	r.backlog = append(r.backlog, rw)
	w.s.at(arrival, r.replicate)
	return rw
}

// script runs op, one of the server's scripts, for inv at the primary,
// and returns the write it made, if any.
func (r *redisWorld) script(inv *invocation, op func()) *replWrite {
	r.caller, r.last = inv, nil
	op()
	return r.last
}

// replicate applies, in order, the writes that have reached the replica
// by now (a failover has dropped those it lost from the backlog).
func (r *redisWorld) replicate() {
	now := r.w.s.now
	for len(r.backlog) > 0 && !r.backlog[0].arrival.After(now) {
		x := r.backlog[0]
		r.backlog = r.backlog[1:]
		if x.rec == nil {
			delete(r.replica, x.key)
		} else {
			r.replica[x.key] = x.rec
		}
	}
}

// touch is what a read does under WAIT: it writes the record again as
// it is, so that the WAIT after it returns only once the replica has
// the record the reader is about to act on (replication is in order).
// Without WAIT it writes nothing.
func (s *redisStore) touch(key string, x *redisRecord) *replWrite {
	if s.r.w.cfg.redisWait == 0 {
		return nil
	}
	return s.r.send(key, x)
}

// redisStore is one sandbox's redis.Store, as the model sees it.
type redisStore struct {
	r  *redisWorld
	sb *sandbox
}

var _ idempotency.Store = (*redisStore)(nil)

var errConnection = errors.New("read tcp: connection reset by peer")

// errNotReplicated is redis's answer when WAIT falls short.
var errNotReplicated = errors.New("redis: the write did not reach the replicas WaitReplicas asks for within WaitTimeout")

// redisAttempts is go-redis's: the first and MaxRetries (3) more, for a
// connection that breaks.
const redisAttempts = 4

// waitTimeout is the simulated function's WaitTimeout.
const waitTimeout = 100 * time.Millisecond

// run runs script as go-redis sends it: again when the connection breaks
// before the answer, whether or not the server ran it.
func (s *redisStore) run(op, key string, script func() *replWrite) error {
	r, w := s.r, s.r.w
	inv := s.sb.current
	for attempt := 1; ; attempt++ {
		f := faultNone
		if !inv.quiet {
			switch x := inv.rng.Float64(); {
			case x < w.cfg.replyLost:
				f = faultReplyLost
			case x < w.cfg.replyLost+w.cfg.slowReply:
				f = faultSlow
			}
		}
		there, back := latency(inv.rng, 0, 2), latency(inv.rng, 0, 2)
		if f == faultSlow {
			back += latency(inv.rng, 100, 1000)
		}
		var err error
		var rw *replWrite
		lost := false
		w.call(inv, there, back, func() {
			if w.s.now.Before(r.failingTo) {
				err = errConnection
				if w.trace != nil {
					w.trace.log(inv, "redis %s %s attempt %d: the primary is failing over", op, short(key), attempt)
				}
				return
			}
			rw = script()
			if rw != nil {
				rw.lostInto = &lost
				if w.cfg.redisWait == 0 && f != faultReplyLost {
					rw.ackedAt = w.s.now.Add(back)
				}
			}
			if w.trace != nil {
				w.trace.log(inv, "redis %s %s attempt %d: %s", op, short(key), attempt, outcomeText(f, nil))
			}
		})
		if err == nil && f == faultReplyLost {
			err = errConnection
		}
		if err == nil && rw != nil && w.cfg.redisWait > 0 {
			err = s.wait(inv, rw, &lost)
		}
		if err == nil || !errors.Is(err, errConnection) || attempt == redisAttempts {
			inv.storeFailed = err != nil
			if err != nil {
				return fmt.Errorf("redis: %s %q: %w", op, key, err)
			}
			return nil
		}
		inv.task.sleep(time.Duration(8<<attempt) * time.Millisecond)
	}
}

// wait is WAIT 1 timeout after a write: its answer comes when the
// replica has the write, or at the timeout.
func (s *redisStore) wait(inv *invocation, rw *replWrite, lost *bool) error {
	w := s.r.w
	deadline := w.s.now.Add(waitTimeout)
	if rw.arrival.After(deadline) {
		inv.task.sleep(deadline.Sub(w.s.now))
		if *lost {
			return errConnection
		}
		return errNotReplicated
	}
	inv.task.sleep(max(rw.arrival.Sub(w.s.now), time.Microsecond))
	if *lost {
		return errConnection
	}
	rw.ackedAt = w.s.now
	return nil
}

func (s *redisStore) Acquire(_ context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if rec.Key == "" {
		return nil, errors.New("redis: empty idempotency key")
	}
	var existing *idempotency.Record
	err := s.run("acquire", rec.Key, func() *replWrite {
		existing = nil
		var x *redisRecord
		rw := s.r.script(s.sb.current, func() { x = s.r.primary.acquire(rec, now) })
		if x == nil {
			return rw
		}
		cp := x.rec
		existing = &cp
		return s.touch(rec.Key, x)
	})
	if err != nil {
		return nil, err
	}
	return existing, nil
}

func (s *redisStore) Complete(_ context.Context, rec *idempotency.Record) error {
	ok := false
	err := s.run("complete", rec.Key, func() *replWrite {
		return s.r.script(s.sb.current, func() { ok = s.r.primary.complete(rec, s.sb.clock.now()) })
	})
	return conditional("complete", rec.Key, ok, err)
}

func (s *redisStore) Release(_ context.Context, key, token string) error {
	ok := false
	err := s.run("release", key, func() *replWrite {
		return s.r.script(s.sb.current, func() { ok = s.r.primary.release(key, token) })
	})
	return conditional("release", key, ok, err)
}

func (s *redisStore) Reclaim(_ context.Context, rec *idempotency.Record, token string) error {
	ok := false
	err := s.run("reclaim", rec.Key, func() *replWrite {
		return s.r.script(s.sb.current, func() { ok = s.r.primary.reclaim(rec, token, s.sb.clock.now()) })
	})
	return conditional("reclaim", rec.Key, ok, err)
}

func (s *redisStore) Get(_ context.Context, key string) (*idempotency.Record, error) {
	var got *idempotency.Record
	err := s.run("get", key, func() *replWrite {
		got = nil
		x := s.r.primary.get(key)
		if x == nil {
			return nil
		}
		cp := x.rec
		got = &cp
		return s.touch(key, x)
	})
	if err != nil {
		return nil, err
	}
	if got == nil {
		return nil, fmt.Errorf("redis: get %q: %w", key, idempotency.ErrRecordNotFound)
	}
	return got, nil
}

// conditional is the answer of a script that writes when its condition
// holds, as redis's conditional gives it.
func conditional(op, key string, ok bool, err error) error {
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("redis: %s %q: %w", op, key, idempotency.ErrLeaseLost)
	}
	return nil
}
