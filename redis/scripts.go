package redis

import "github.com/redis/go-redis/v9"

// Every conditional step is one of these scripts, which the server runs
// atomically: nothing else touches the key between the script's read and
// its write. Each touches only KEYS[1], the record's key, so it runs on
// the cluster node that owns the key. The client sends EVALSHA, and EVAL
// when the server answers NOSCRIPT (redis.Script.Run).
//
// The field names are the field constants (fieldStatus...). A record's
// whole hash is written at once (DEL, then HSET), so no field of the
// record it replaces survives; then PEXPIRE gives it its TTL, when it has
// one.

// prelude holds the functions the scripts share.
const prelude = `
-- whole reads a stored time as decode (record.go) does: an optional minus
-- sign and 1 to 15 digits, held exactly by a Lua number; nil otherwise.
local function whole(v)
	local digits = v and string.match(v, '^%-?(%d+)$')
	if digits and #digits <= 15 then
		return tonumber(v)
	end
	return nil
end

-- live is idempotency.Record.Live on the stored fields, at now (epoch
-- seconds) and nowms (epoch milliseconds): true or false, or nil when a
-- time it needs cannot be read.
local function live(status, expiry, leaseEnd, now, nowms)
	if expiry then
		local e = whole(expiry)
		if e == nil then
			return nil
		end
		if now >= e then
			return false
		end
	end
	if status ~= 'INPROGRESS' then
		return true
	end
	if not leaseEnd then
		return false
	end
	local l = whole(leaseEnd)
	if l == nil then
		return nil
	end
	return nowms < l
end

-- put replaces the record with the fields ARGV[from], ARGV[from+1]...,
-- with a TTL of ttl milliseconds unless ttl is '0'.
local function put(key, ttl, from)
	redis.call('DEL', key)
	redis.call('HSET', key, unpack(ARGV, from))
	if ttl ~= '0' then
		redis.call('PEXPIRE', key, ttl)
	end
end
`

// acquireScript writes the record unless a live one holds the key, and
// then returns that one (HGETALL). A record whose liveness cannot be read
// is returned too, never written over: decode reports it corrupted.
//
//	ARGV[1] now, epoch seconds
//	ARGV[2] now, epoch milliseconds
//	ARGV[3] the TTL in milliseconds, or 0
//	ARGV[4...] the new record's fields
//
// It returns 0 when it wrote the record.
var acquireScript = redis.NewScript(acquireSource(""))

// acquireReplicatedScript is acquireScript for a store that waits for its
// replicas (Options.WaitReplicas): before it returns a record it read, it
// writes the record's status again as it is. Replication keeps the
// primary's order, so once that write has reached the replicas, so has
// the record: the WAIT sent after the script then holds back a replay of
// a record that a failover could still lose (the simulator's seed 5886
// on redis, with WAIT 1: a duplicate replayed a COMPLETED record the
// replica did not have, the primary failed over, and the effect ran
// again after the lease).
var acquireReplicatedScript = redis.NewScript(acquireSource(touch))

// touch writes the status field of the record at key again, unchanged: a
// write that the WAIT after the script waits for.
const touch = `if f[1] then redis.call('HSET', key, 'status', f[1]) end`

func acquireSource(beforeReturn string) string {
	return prelude + `
local key = KEYS[1]
if redis.call('EXISTS', key) == 1 then
	local f = redis.call('HMGET', key, 'status', 'expiration', 'in_progress_expiration')
	if live(f[1], f[2], f[3], tonumber(ARGV[1]), tonumber(ARGV[2])) ~= false then
		` + beforeReturn + `
		return redis.call('HGETALL', key)
	end
end
put(key, ARGV[3], 4)
return 0
`
}

// completeScript replaces the record when it carries the lease token.
//
//	ARGV[1] the lease token
//	ARGV[2] the TTL in milliseconds, or 0
//	ARGV[3...] the new record's fields
//
// It returns 1 when it wrote the record, 0 when the token differs or there
// is no record.
var completeScript = redis.NewScript(prelude + `
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1] then
	return 0
end
put(KEYS[1], ARGV[2], 3)
return 1
`)

// releaseScript deletes the record when it carries the lease token,
// ARGV[1]. It returns 1 when it deleted it or there was none, 0 when the
// record carries another token.
var releaseScript = redis.NewScript(prelude + `
if redis.call('EXISTS', KEYS[1]) == 0 then
	return 1
end
if redis.call('HGET', KEYS[1], 'lease_token') ~= ARGV[1] then
	return 0
end
redis.call('DEL', KEYS[1])
return 1
`)

// reclaimScript replaces an UNCERTAIN record carrying the token the
// caller read, or carrying the new record's own token: that record was
// written by an earlier attempt of this same call, whose reply was lost,
// since the token is new to this call.
//
//	ARGV[1] the token read
//	ARGV[2] the new record's token
//	ARGV[3] the TTL in milliseconds, or 0
//	ARGV[4...] the new record's fields
//
// It returns 1 when it wrote the record, 0 otherwise.
var reclaimScript = redis.NewScript(prelude + `
local f = redis.call('HMGET', KEYS[1], 'status', 'lease_token')
if f[1] ~= 'UNCERTAIN' or (f[2] ~= ARGV[1] and f[2] ~= ARGV[2]) then
	return 0
end
put(KEYS[1], ARGV[3], 4)
return 1
`)

// getScript reads the record: HGETALL, inside a script so that it is
// sent to the primary even by a client that sends reads to replicas
// (ReadOnly, RouteByLatency, RouteRandomly), where a record just written
// may not have arrived yet.
var getScript = redis.NewScript(`return redis.call('HGETALL', KEYS[1])`)

// getReplicatedScript is getScript for a store that waits for its
// replicas: it touches the record it returns, as acquireReplicatedScript
// does.
var getReplicatedScript = redis.NewScript(`
local key = KEYS[1]
local f = {redis.call('HGET', key, 'status')}
` + touch + `
return redis.call('HGETALL', key)
`)

// deleteScript deletes the record when it still has the status and lease
// token an operator saw (Store.Delete): ARGV[1] the status, ARGV[2] the
// token, empty for a record without one. It returns 1 when it deleted the
// record, 0 when there is none or it has another status or token.
var deleteScript = redis.NewScript(`
local f = redis.call('HMGET', KEYS[1], 'status', 'lease_token')
if f[1] ~= ARGV[1] or (f[2] or '') ~= ARGV[2] then
	return 0
end
redis.call('DEL', KEYS[1])
return 1
`)

// deleteCorruptedScript deletes a key that is not a record the store reads
// (Store.DeleteCorrupted), if it is still what the operator saw: ARGV[1]
// "hash", with ARGV[2] the status field and ARGV[3] the lease_token field
// as read ("" when absent), or "other" for a key of another type. It
// returns 1 when it deleted the key, 0 otherwise.
var deleteCorruptedScript = redis.NewScript(`
local f = redis.pcall('HMGET', KEYS[1], 'status', 'lease_token')
if f.err then
	if ARGV[1] ~= 'other' then
		return 0
	end
elseif ARGV[1] ~= 'hash' or (f[1] or '') ~= ARGV[2] or (f[2] or '') ~= ARGV[3] then
	return 0
end
redis.call('DEL', KEYS[1])
return 1
`)
