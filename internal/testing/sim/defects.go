package sim

// This file lists deliberate defects that the simulator must catch: each
// is a change a careless edit could make, and a test builds the
// simulator against each, without ever
// compiling it into the library: the library's own file is replaced, for
// that build only, by a copy with one string replaced (go build
// -overlay), and the test fails when the string no longer matches the
// source, so that a defect cannot silently stop being tested.

// Defect is one deliberate defect.
type Defect struct {
	Name string
	// File is the library file changed, from the repository's root, Old
	// the text replaced (it must occur exactly once) and New its
	// replacement. An empty File is a defect of a store's deployment,
	// not of the code: Options say it.
	File, Old, New string
	Options        Options
	Store          Store
	// Seeds is the budget within which it must be caught, when it is
	// not the test's default: a defect that shows only when a rare
	// fault meets a rare state needs more schedules to meet them.
	Seeds int
	// Invariant is what the simulator reports for it.
	Invariant string
	Why       string
}

// Defects are the defects the simulator is shown to catch.
var Defects = []Defect{
	{
		Name:      "complete-without-token",
		File:      "dynamo/store.go",
		Old:       "cond, names, values := s.tokenCondition(rec.LeaseToken)",
		New:       `cond, names, values := "attribute_exists(#token) OR attribute_not_exists(#token)", map[string]string{"#token": s.opts.LeaseTokenAttr}, map[string]types.AttributeValue(nil)`,
		Store:     StoreDynamo,
		Invariant: invFenced,
		Why:       "Complete is no longer conditioned on the lease token: an invocation whose key was taken over overwrites the new holder's record",
	},
	{
		Name:      "takeover-live",
		File:      "dynamo/store.go",
		Old:       `OR #lease <= :nowms))"),`,
		New:       `OR #lease <= :nowms OR #lease > :nowms))"),`,
		Store:     StoreDynamo,
		Invariant: invAtMostOnce,
		Why:       "Acquire takes over an IN_PROGRESS record whose lease has not ended: a duplicate runs the handler while the first still does",
	},
	{
		Name:      "replay-without-payload-check",
		File:      "powertools/idempotency/duplicate.go",
		Old:       "if inv.validation == nil || rec.PayloadHash == inv.hash || (rec.Status == StatusInProgress && rec.PayloadHash == \"\") {",
		New:       "if true {",
		Store:     StoreDynamo,
		Invariant: invPayload,
		Why:       "a duplicate with another payload gets the stored response instead of a PayloadConflictError",
	},
	{
		Name: "release-after-commit",
		File: "dynamo/commit.go",
		Old: `	if gerr == nil && s.completedBy(ctx, rec, item) {
		return nil
	}`,
		New: `	if gerr == nil && s.completedBy(ctx, rec, item) {
		return refused(rec, err)
	}`,
		Store:     StoreDynamo,
		Invariant: invReplay,
		Why:       "a transaction applied on an attempt whose reply was lost, the SDK's later attempts refused, is reported refused (seed 1260 before its fix): the middleware releases its COMPLETE record, and the next delivery commits the staged writes again",
	},
	{
		Name:      "lease-shorter-than-invocation",
		File:      "powertools/idempotency/lease.go",
		Old:       "return d.Add(inv.leaseBeyond)",
		New:       "return d.Add(inv.now.Sub(d) + time.Second)",
		Store:     StoreDynamo,
		Invariant: invRecord,
		Why:       "the lease ends a second after the invocation starts, not at its deadline: a duplicate takes the key over from an invocation still running",
	},
	// The defects below were chosen to hide from a checker that takes its
	// facts from the code: most show only after a crash, a lost answer,
	// an expiry or a failover.
	{
		Name:      "abandoned-without-grace",
		File:      "powertools/idempotency/lease.go",
		Old:       "return !rec.Deadline.IsZero() && !now.Before(rec.Deadline.Add(AbandonGrace))",
		New:       "return !rec.Deadline.IsZero() && !now.Before(rec.Deadline)",
		Store:     StoreDynamo,
		Invariant: invBlocked,
		Why:       "under AbandonBlock and AbandonUncertain a holder counts as gone at its deadline, not five seconds after: a COMPLETED write it sent just before can land after a duplicate marked the record UNCERTAIN; shows only once a holder has died",
	},
	{
		Name:      "uncertain-hold-new-token",
		File:      "powertools/idempotency/complete.go",
		Old:       "Expiry:      inv.clock().Add(inv.expiresAfter),\n\t\tLeaseToken:  rec.LeaseToken,",
		New:       "Expiry:      inv.clock().Add(inv.expiresAfter),\n\t\tLeaseToken:  newLeaseToken(),",
		Store:     StoreDynamo,
		Invariant: invAtMostOnce,
		Why:       "an uncertain outcome is held under a new token, so the store refuses the UNCERTAIN write: the key stays IN_PROGRESS until the lease ends and the effect runs again; shows only when the downstream's answer is lost",
	},
	{
		Name:      "cache-ignores-expiry",
		File:      "powertools/idempotency/cache.go",
		Old:       "if !rec.Live(now) {",
		New:       "if rec.Status != StatusComplete {",
		Store:     StoreDynamo,
		Invariant: invReplay,
		Why:       "the local cache keeps a COMPLETED record past its expiry: once the key has been taken again, a sandbox replays the old response; shows only after an expiry",
	},
	{
		Name:      "policies-swapped",
		File:      "powertools/idempotency/lease.go",
		Old:       "if e.abandon == AbandonRetry {",
		New:       "if e.abandon != AbandonBlock {",
		Store:     StoreDynamo,
		Invariant: invRecord,
		Why:       "AbandonUncertain gets AbandonRetry's lease (until the deadline, no deadline kept): a duplicate takes over a dead holder's key and runs the handler again instead of reconciling",
	},
	{
		Name:      "lease-without-beyond",
		File:      "powertools/idempotency/lease.go",
		Old:       "return d.Add(inv.leaseBeyond)",
		New:       "return d",
		Store:     StoreRedis,
		Invariant: invRecord,
		Why:       "WithLeaseBeyondDeadline is dropped from the lease: a handler whose effect finishes after its deadline is run again meanwhile",
	},
	{
		Name:      "dynamo-expiry-in-milliseconds",
		File:      "dynamo/store.go",
		Old:       `"attribute_not_exists(#id) OR #expiry <= :now OR "`,
		New:       `"attribute_not_exists(#id) OR #expiry <= :nowms OR "`,
		Store:     StoreDynamo,
		Invariant: invOutcome,
		Why:       "Acquire compares the expiry with the time in milliseconds, leaving :now unused, which DynamoDB refuses: no request gets through, though nothing fails",
	},
	{
		Name:      "dynamo-deadline-in-seconds",
		File:      "dynamo/item.go",
		Old:       "item[o.DeadlineAttr] = number(rec.Deadline.UnixMilli())",
		New:       "item[o.DeadlineAttr] = number(rec.Deadline.Unix())",
		Store:     StoreDynamo,
		Invariant: invRecord,
		Why:       "the holder's deadline is stored in seconds and read in milliseconds: under AbandonBlock and AbandonUncertain every holder looks gone since 1970",
	},
	{
		Name:      "dynamo-expiry-read-in-milliseconds",
		File:      "dynamo/item.go",
		Old:       "if rec.Expiry, err = epoch(item, o.ExpiryAttr, seconds); err != nil {",
		New:       "if rec.Expiry, err = epoch(item, o.ExpiryAttr, time.UnixMilli); err != nil {",
		Store:     StoreDynamo,
		Invariant: invOutcome,
		Why:       "a record's expiry, stored in seconds, is read in milliseconds: a duplicate takes every live record it meets for expired, and after three tries answers PersistenceError; shows only to a duplicate",
	},
	{
		Name:      "redis-lease-in-seconds",
		File:      "redis/scripts.go",
		Old:       "return nowms < l",
		New:       "return now < l",
		Store:     StoreRedis,
		Invariant: invOutcome,
		Why:       "the Acquire script compares the lease end, in milliseconds, with the time in seconds: no lease ever ends, and a dead holder's key stays IN_PROGRESS until it expires; shows only once a holder has died",
	},
	{
		Name:      "redis-ttl-in-seconds",
		File:      "redis/record.go",
		Old:       "return (left + deleteAfterExpiry).Milliseconds()",
		New:       "return int64((left + deleteAfterExpiry).Seconds())",
		Store:     StoreRedis,
		Invariant: invRecord,
		Why:       "the TTL is given in seconds to PEXPIRE, which counts milliseconds: the server deletes a record a thousandth of its life after writing it",
	},
	{
		Name:      "redis-uncertain-not-live",
		File:      "redis/scripts.go",
		Old:       "if status ~= 'INPROGRESS' then",
		New:       "if status == 'COMPLETED' then",
		Store:     StoreRedis,
		Invariant: invFenced,
		Why:       "the Acquire script takes an UNCERTAIN record for a lapsed lease: the next duplicate writes over it and runs the handler again; shows only after an uncertain outcome",
	},
	{
		Name:      "redis-read-without-touch",
		File:      "redis/scripts.go",
		Old:       "acquireSource(touch))",
		New:       `acquireSource(""))`,
		Options:   Options{RedisWait: 1},
		Store:     StoreRedis,
		Seeds:     40000,
		Invariant: invReplay,
		Why:       "with WaitReplicas, a duplicate's Acquire no longer writes the record it read: it replays a COMPLETED record the replica does not have, which a failover then loses; shows only with a failover",
	},
	{
		Name:      "redis-wait-ignored",
		File:      "redis/store.go",
		Old:       "if int(n) < s.opts.WaitReplicas {",
		New:       "if int(n) > s.opts.WaitReplicas {",
		Options:   Options{RedisWait: 1},
		Store:     StoreRedis,
		Invariant: invAtMostOnce,
		Why:       "WAIT's answer is compared the wrong way: a write no replica has is reported made, and a failover loses it; shows only with a lagging replica and a failover",
	},
	{
		Name:      "responsestore-acquire-unread",
		File:      "powertools/idempotency/responsestore/store.go",
		Old:       "return s.read(ctx, existing)",
		New:       "return existing, nil",
		Store:     StoreRedis,
		Invariant: invReplay,
		Why:       "the record a duplicate's Acquire finds is returned with its envelope: the duplicate replays compressed, encrypted bytes",
	},
	{
		Name:      "responsestore-changes-the-record",
		File:      "powertools/idempotency/responsestore/store.go",
		Old:       "cp := *rec\n\t\tcp.Response = e.marshal()\n\t\terr = put(&cp)",
		New:       "rec.Response = e.marshal()\n\t\terr = put(rec)",
		Store:     StoreDynamo,
		Invariant: invReplay,
		Why:       "the store packs the response into the record it was given, which the Store contract forbids: the middleware's next attempt at a COMPLETED write, after a lost answer, packs it twice, and the local cache keeps the envelope",
	},
	{
		Name:      "redis-without-wait",
		Options:   Options{RedisWait: 0},
		Store:     StoreRedis,
		Invariant: invAtMostOnce,
		Why:       "redis without WaitReplicas on a primary with a replica: a failover loses writes the store was told were made (with WaitReplicas 1, the same seeds break nothing)",
	},
}
