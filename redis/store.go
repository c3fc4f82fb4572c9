package redis

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gopowertools/lambda/internal/firstuse"
	"github.com/gopowertools/lambda/internal/simclock"
	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// Store is an [idempotency.Store] backed by Redis or Valkey. Make it with
// [New]. It is safe for concurrent use.
type Store struct {
	client redis.UniversalClient
	opts   Options
	kind   firstuse.Check // checkKind, before the first command
	access firstuse.Check // checkAccess, before the first Acquire
}

var _ idempotency.Store = (*Store)(nil)

// New returns a Store that keeps records with client: a *redis.Client
// (a standalone server, or a replication group's primary endpoint), a
// *redis.ClusterClient (a Redis Cluster), the failover client of
// [redis.NewFailoverClient] (Sentinel), or any [redis.UniversalClient].
// TLS and AUTH are the client's options.
//
// A bad option gives a [*idempotency.ConfigError]. New sends no command:
// before its first Acquire (in Lambda, the first invocation after a cold
// start), the store asks the server, with that call's context, whether the
// client fits it and its user may send the store's commands, and refuses
// one that does not with a [*idempotency.ConfigError] before any record
// is written (docs/redis.md).
func New(client redis.UniversalClient, optFns ...func(*Options)) (*Store, error) {
	if client == nil {
		return nil, &idempotency.ConfigError{Name: "redis.New client", Err: errors.New("nil")}
	}
	o, err := options(optFns)
	if err != nil {
		return nil, err
	}
	if _, ring := client.(*redis.Ring); ring && o.WaitReplicas > 0 {
		return nil, &idempotency.ConfigError{Name: "redis.Options.WaitReplicas", Err: errors.New("a Ring client cannot send WAIT on the connection that wrote: use a Client, a ClusterClient or a failover client")}
	}
	return &Store{client: client, opts: o}, nil
}

// errEmptyKey is returned for an empty idempotency key, which the other
// stores refuse too.
var errEmptyKey = errors.New("redis: empty idempotency key")

// key is the Redis key of the record key.
func (s *Store) key(key string) []string { return []string{s.opts.KeyPrefix + key} }

// record returns the script arguments that carry rec, after lead: its
// TTL from now, then its fields. A record over the size limit gives
// [idempotency.ErrRecordTooLarge].
func (s *Store) record(op string, rec *idempotency.Record, now time.Time, lead ...any) ([]any, error) {
	if rec.Key == "" {
		return nil, errEmptyKey
	}
	var room [2 * maxFields]any
	fields := appendFields(room[:0], rec)
	if n := len(s.opts.KeyPrefix) + len(rec.Key) + size(fields); n > s.opts.MaxRecordSize {
		return nil, fmt.Errorf("redis: %s %q: record of %d bytes is over the limit of %d: %w", op, rec.Key, n, s.opts.MaxRecordSize, idempotency.ErrRecordTooLarge)
	}
	args := make([]any, 0, len(lead)+1+len(fields))
	args = append(args, lead...)
	args = append(args, ttl(rec.Expiry, now))
	return append(args, fields...), nil
}

// Acquire writes rec unless a live record holds its key
// ([idempotency.Record.Live] at now), with one script that reads the
// stored record's status, expiration and in_progress_expiration and, when
// it is not live, replaces it. Otherwise it returns the stored record,
// or a [*idempotency.CorruptedRecordError] when it cannot be read. The
// key's TTL is the time from now to rec.Expiry, plus a minute.
func (s *Store) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	if err := s.access.Do(ctx, s.checkAccess); err != nil {
		return nil, err
	}
	args, err := s.record("acquire", rec, now, now.Unix(), now.UnixMilli())
	if err != nil {
		return nil, err
	}
	script := acquireScript
	if s.opts.WaitReplicas > 0 {
		script = acquireReplicatedScript
	}
	reply, err := s.eval(ctx, script, rec.Key, args)
	if err != nil {
		return nil, requestError("acquire", rec.Key, err)
	}
	if n, ok := reply.(int64); ok && n == 0 {
		return nil, nil
	}
	return s.decodeReply("acquire", rec.Key, reply)
}

// Complete replaces the record with rec, a COMPLETED record, when the
// stored one carries rec.LeaseToken, with one script; otherwise, or when
// there is none, it returns [idempotency.ErrLeaseLost]. The key's TTL is
// the time left until rec.Expiry on this process's clock, plus a minute.
// A record over the size limit gives [idempotency.ErrRecordTooLarge]
// without a command.
func (s *Store) Complete(ctx context.Context, rec *idempotency.Record) error {
	return s.replace(ctx, "complete", rec)
}

// MarkUncertain replaces the record with rec, an UNCERTAIN record, as
// Complete does.
func (s *Store) MarkUncertain(ctx context.Context, rec *idempotency.Record) error {
	return s.replace(ctx, "mark uncertain", rec)
}

// replace writes rec when the stored record carries its lease token.
func (s *Store) replace(ctx context.Context, op string, rec *idempotency.Record) error {
	args, err := s.record(op, rec, simclock.Now(ctx), rec.LeaseToken)
	if err != nil {
		return err
	}
	return s.conditional(ctx, op, rec.Key, completeScript, args)
}

// Release deletes the record key when it carries token, with one script.
// A missing record is not an error; a record with another token gives
// [idempotency.ErrLeaseLost] and is left alone.
func (s *Store) Release(ctx context.Context, key, token string) error {
	if key == "" {
		return errEmptyKey
	}
	return s.conditional(ctx, "release", key, releaseScript, []any{token})
}

// Reclaim replaces an UNCERTAIN record with rec, for the invocation that
// reconciles it, with one script, when the stored record carries token,
// the one the caller read: of two invocations that read the same record,
// the second finds another token and gets [idempotency.ErrLeaseLost]. A
// stored UNCERTAIN record that already carries rec.LeaseToken counts as
// reclaimed: only an earlier attempt of this call, whose reply was lost,
// can have written that new token.
func (s *Store) Reclaim(ctx context.Context, rec *idempotency.Record, token string) error {
	args, err := s.record("reclaim", rec, simclock.Now(ctx), token, rec.LeaseToken)
	if err != nil {
		return err
	}
	return s.conditional(ctx, "reclaim", rec.Key, reclaimScript, args)
}

// conditional runs one of the scripts that answer 1 when their condition
// held and 0 when it did not.
func (s *Store) conditional(ctx context.Context, op, key string, script *redis.Script, args []any) error {
	reply, err := s.eval(ctx, script, key, args)
	if err != nil {
		return requestError(op, key, err)
	}
	switch n, ok := reply.(int64); {
	case !ok:
		return fmt.Errorf("redis: %s %q: the script answered %T, want an integer", op, key, reply)
	case n == 0:
		return fmt.Errorf("redis: %s %q: %w", op, key, idempotency.ErrLeaseLost)
	}
	return nil
}

// eval runs script on the record key, within the invocation's deadline
// less the time kept to answer (bound).
func (s *Store) eval(ctx context.Context, script *redis.Script, key string, args []any) (any, error) {
	if err := s.kind.Do(ctx, s.checkKind); err != nil {
		return nil, err
	}
	bounded, cancel := bound(ctx)
	defer cancel()
	reply, err := s.run(bounded, script, key, args...)
	if err != nil {
		return nil, boundError(ctx, bounded, err)
	}
	return reply, nil
}

// Get reads the record key, with one script run on the primary. It
// returns [idempotency.ErrRecordNotFound] when there is none. A record
// past its expiry is returned until the server deletes it, a minute later.
func (s *Store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	if key == "" {
		return nil, errEmptyKey
	}
	script := getScript
	if s.opts.WaitReplicas > 0 {
		script = getReplicatedScript
	}
	reply, err := s.eval(ctx, script, key, nil)
	if err != nil {
		return nil, requestError("get", key, err)
	}
	if arr, ok := reply.([]any); ok && len(arr) == 0 {
		return nil, fmt.Errorf("redis: get %q: %w", key, idempotency.ErrRecordNotFound)
	}
	return s.decodeReply("get", key, reply)
}

// decodeReply reads a record a script returned with HGETALL.
func (s *Store) decodeReply(op, key string, reply any) (*idempotency.Record, error) {
	arr, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("redis: %s %q: the script answered %T, want a hash", op, key, reply)
	}
	f, err := fieldsOf(arr)
	if err != nil {
		return nil, fmt.Errorf("redis: %s %q: the script answered %w", op, key, err)
	}
	return decode(key, &f)
}

// errNotReplicated is the error of a step whose write did not reach
// Options.WaitReplicas replicas within Options.WaitTimeout.
var errNotReplicated = errors.New("the write did not reach the replicas WaitReplicas asks for within WaitTimeout: a failover could still lose it")

// run runs script on the record key with args, as [redis.Script.Run]
// does (EVALSHA, and EVAL after NOSCRIPT). With Options.WaitReplicas, the
// script and a WAIT go in one pipeline, on one connection to the node
// that owns the key, since WAIT waits for that connection's writes; a
// WAIT answered with fewer replicas fails the step.
func (s *Store) run(ctx context.Context, script *redis.Script, key string, args ...any) (any, error) {
	keys := s.key(key)
	if s.opts.WaitReplicas == 0 {
		return script.Run(ctx, s.client, keys, args...).Result()
	}
	var node redis.Cmdable = s.client
	if c, ok := s.client.(*redis.ClusterClient); ok {
		var err error
		if node, err = c.MasterForKey(ctx, keys[0]); err != nil {
			return nil, err
		}
	}
	reply, err := s.replicated(ctx, node, script.EvalSha, keys, args)
	if redis.HasErrorPrefix(err, "NOSCRIPT") {
		reply, err = s.replicated(ctx, node, script.Eval, keys, args)
	}
	return reply, err
}

// replicated sends a script with send, then WAIT, in one pipeline.
func (s *Store) replicated(ctx context.Context, node redis.Cmdable, send func(context.Context, redis.Scripter, []string, ...any) *redis.Cmd, keys []string, args []any) (any, error) {
	pipe := node.Pipeline()
	cmd := send(ctx, pipe, keys, args...)
	// go-redis's pipelines have WAIT as a method, though not in the
	// Pipeliner interface.
	wait := pipe.(interface {
		Wait(context.Context, int, time.Duration) *redis.IntCmd
	}).Wait(ctx, s.opts.WaitReplicas, s.opts.WaitTimeout)
	_, _ = pipe.Exec(ctx) // each command's own error is read below
	reply, err := cmd.Result()
	if err != nil {
		return nil, err
	}
	n, err := wait.Result()
	if err != nil {
		return nil, err
	}
	if int(n) < s.opts.WaitReplicas {
		return nil, fmt.Errorf("%w: WAIT answered %d of %d within %v", errNotReplicated, n, s.opts.WaitReplicas, s.opts.WaitTimeout)
	}
	return reply, nil
}
