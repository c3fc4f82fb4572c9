package sim

import "testing"

// The schedules below found something: each is kept, by seed, as a
// regression test. A seed names a schedule of today's plan generator;
// a change there that moves these schedules must find new
// seeds for them (run the command on the old code, or with the defect).

// TestFixedSchedules: schedules that broke an invariant before the fix
// named, and must break none now.
func TestFixedSchedules(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		seed  uint64
		store Store
		o     Options
		fix   string
	}{
		// The SDK's first TransactWriteItems attempt applied, its reply
		// lost, the last refused: the store took it for refused, the key
		// was released and the staged writes committed twice. (Seed 1260
		// before DynamoDB's ClientRequestToken was modelled; the first
		// that the unfixed code fails now, as release-after-commit.)
		{151, StoreDynamo, Options{}, "dynamo: a refused last attempt of a commit reads the record back"},
		// With WAIT but reads not touched: a duplicate replayed a COMPLETE
		// record the replica did not have yet, which a failover then lost;
		// the effect ran again after the lease. (Seed 5886 before the real
		// redis.Store ran in the simulator, 11263 before the store's look at
		// the server moved into the first invocation; now, as
		// redis-read-without-touch.)
		{34073, StoreRedis, Options{RedisWait: 1}, "redis: with WaitReplicas, a read waits for the record it returns"},
		// A duplicate read the COMPLETE record just before it expired and
		// got the answer 1.6 s later, once another request had replaced
		// it: the checker judged the replay at its return, not its read.
		{37634, StoreDynamo, Options{}, "sim: a replay is judged by the clock read before the store's answer"},
		// A COMPLETED record, replayed, expired and was taken over; a
		// failover then lost the writes after it, and the checker took
		// the record's end for the failover's loss.
		{60453, StoreRedis, Options{RedisWait: 1}, "sim: a record that has ended by the spec is no failover's loss"},
	} {
		if r := Run(tt.seed, tt.store, tt.o); len(r.Violations) > 0 {
			t.Errorf("seed %d on %s (%s): %v", tt.seed, tt.store, tt.fix, r.Violations)
		}
	}
}

// TestDocumentedLimits: the schedules docs/reliability.md, docs/redis.md
// and docs/multi-region.md cite still show their limit, and the setting
// each page advises removes it.
func TestDocumentedLimits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		seed  uint64
		store Store
		limit string
		fixed *Options // the advised setting, when there is one
	}{
		{7163, StoreDynamo, limitSkew, &Options{LeaseBeyondSkew: true}},
		// The holder's Acquire answered late, so its effect came after
		// the skewed taker's: the checker judged the pair in the order of
		// their effects, not of their acquisitions.
		{21245, StoreDynamo, limitSkew, &Options{LeaseBeyondSkew: true}},
		{230, StoreRedis, limitRedisFailover, &Options{RedisWait: 1}},
		{1211, StoreDynamo, limitReconcileLives, nil},
		{2, StoreGlobalEventual, limitMREC, nil},
	} {
		r := Run(tt.seed, tt.store, Options{})
		for _, v := range excusedBy(r, tt.limit) {
			if v.Fault == "" {
				t.Errorf("seed %d on %s: %s names no fault", tt.seed, tt.store, v)
			}
		}
		if len(excusedBy(r, tt.limit)) == 0 {
			t.Errorf("seed %d on %s no longer shows %q: %v", tt.seed, tt.store, tt.limit, r.Violations)
		}
		if r.Failed() {
			t.Errorf("seed %d on %s: a violation outside the documented limits: %v", tt.seed, tt.store, r.Violations)
		}
		if tt.fixed != nil {
			if r := Run(tt.seed, tt.store, *tt.fixed); len(r.Violations) > 0 {
				t.Errorf("seed %d on %s with %+v: %v, want none", tt.seed, tt.store, *tt.fixed, r.Violations)
			}
		}
	}
}
