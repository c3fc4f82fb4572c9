package sim

// This file lists deliberate defects that the simulator must catch: each
// is a change a careless edit could make, and TestDefectsCaught
// (defects_test.go) builds the simulator against each, without ever
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
		Old:       "if e.validation == nil || rec.PayloadHash == hash || (rec.Status == StatusInProgress && rec.PayloadHash == \"\") {",
		New:       "if true {",
		Store:     StoreDynamo,
		Invariant: invPayload,
		Why:       "a duplicate with another payload gets the stored response instead of a PayloadConflictError",
	},
	{
		Name: "release-after-commit",
		File: "dynamo/commit.go",
		Old: `	if s.completedBy(ctx, rec, old) {
		// An earlier attempt of this very transaction was applied and its
		// reply lost; the SDK's retry found the record COMPLETED.
		return nil
	}`,
		New: `	if s.completedBy(ctx, rec, old) {
		return refused(rec, err)
	}`,
		Store:     StoreDynamo,
		Invariant: invExactlyOnce,
		Why:       "a transaction applied on an attempt whose reply was lost is reported refused: the middleware releases its COMPLETE record, and the next delivery commits the staged writes again",
	},
	{
		Name:      "lease-shorter-than-invocation",
		File:      "powertools/idempotency/engine.go",
		Old:       "return d.Add(e.leaseBeyond)",
		New:       "return d.Add(now.Sub(d) + time.Second)",
		Store:     StoreDynamo,
		Invariant: invAtMostOnce,
		Why:       "the lease ends a second after the invocation starts, not at its deadline: a duplicate takes the key over from an invocation still running",
	},
	{
		Name:      "redis-without-wait",
		Options:   Options{RedisWait: 0},
		Store:     StoreRedis,
		Invariant: invAtMostOnce,
		Why:       "redis without WaitReplicas on a primary with a replica: a failover loses writes the store was told were made (with WaitReplicas 1, the same seeds break nothing)",
	},
}
