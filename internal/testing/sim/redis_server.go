package sim

import (
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is a Redis or Valkey server, one node of the modelled
// deployment: a keyspace of hashes with TTLs on the server's clock, the
// commands that redis.Store and go-redis send (HELLO, CLIENT, EVALSHA,
// EVAL, WAIT...), and the commands its Lua scripts call, which run in
// gopher-lua. It answers in RESP through the in-process connections the
// clients dial. The differential test runs the real redis.Store on it
// and on Valkey, TTLs included.

// redisHash is a key's value: a hash, its fields in the order they were
// first set (HGETALL gives that order for a small hash), and its expiry.
type redisHash struct {
	fields   []string  // name, value, name, value...
	expireAt time.Time // on the server's clock; zero: no TTL
}

func (h *redisHash) get(name string) (string, bool) {
	for i := 0; i < len(h.fields); i += 2 {
		if h.fields[i] == name {
			return h.fields[i+1], true
		}
	}
	return "", false
}

// set sets name to value and reports whether the field is new.
func (h *redisHash) set(name, value string) bool {
	for i := 0; i < len(h.fields); i += 2 {
		if h.fields[i] == name {
			h.fields[i+1] = value
			return false
		}
	}
	h.fields = append(h.fields, name, value)
	return true
}

func (h *redisHash) clone() *redisHash {
	if h == nil {
		return nil
	}
	return &redisHash{fields: slices.Clone(h.fields), expireAt: h.expireAt}
}

func (h *redisHash) equal(o *redisHash) bool {
	if h == nil || o == nil {
		return h == o
	}
	return h.expireAt.Equal(o.expireAt) && slices.Equal(h.fields, o.fields)
}

// redisServer is one node's keyspace and script cache.
type redisServer struct {
	data map[string]*redisHash
	now  func() time.Time // the server's clock
	// scripts are the scripts this node has been given (EVAL, SCRIPT
	// LOAD), by SHA1: a node's script cache is its own, and a replica
	// promoted by a failover starts with an empty one.
	scripts map[string]string
	// written is told, after each command, of each key it changed: the
	// value before and after (nil: none). expired of each key the server
	// expires.
	written func(key string, before, after *redisHash)
	expired func(key string, h *redisHash)

	// dirty holds, while a command runs, the value each key it wrote had
	// before it.
	dirty map[string]*redisHash
	order []string
}

func newRedisServer(data map[string]*redisHash, now func() time.Time) *redisServer {
	return &redisServer{data: data, now: now, scripts: map[string]string{}, dirty: map[string]*redisHash{}}
}

// lookup is the key's value, expired as a server expires a key whose TTL
// has passed when it is next touched.
func (s *redisServer) lookup(key string) *redisHash {
	h := s.data[key]
	if h != nil && !h.expireAt.IsZero() && !h.expireAt.After(s.now()) {
		delete(s.data, key)
		if s.expired != nil {
			s.expired(key, h)
		}
		return nil
	}
	return h
}

// modify records key's value before the running command's first write
// of it.
func (s *redisServer) modify(key string) {
	if _, ok := s.dirty[key]; ok {
		return
	}
	s.dirty[key] = s.lookup(key).clone()
	s.order = append(s.order, key)
}

// exec runs one command, as a client sends it, and tells written of the
// keys it changed. conn is the connection's state (HELLO's protocol).
func (s *redisServer) exec(c *connState, args []string) resp {
	out := s.command(c, args, false)
	for _, key := range s.order {
		before := s.dirty[key]
		delete(s.dirty, key)
		if s.written != nil {
			s.written(key, before, s.data[key])
		}
	}
	s.order = s.order[:0]
	return out
}

// connState is what a server keeps of a connection.
type connState struct {
	proto int // 2 or 3, as HELLO set it
}

// command runs args; inScript is true for redis.call.
func (s *redisServer) command(c *connState, args []string, inScript bool) resp {
	if len(args) == 0 {
		return errorReply("ERR empty command")
	}
	name := strings.ToLower(args[0])
	arity := func(n int) bool { return len(args) >= n }
	switch name {
	case "exists":
		if !arity(2) {
			return wrongArity(name)
		}
		n := 0
		for _, k := range args[1:] {
			if s.lookup(k) != nil {
				n++
			}
		}
		return intReply(int64(n))
	case "hget":
		if len(args) != 3 {
			return wrongArity(name)
		}
		if h := s.lookup(args[1]); h != nil {
			if v, ok := h.get(args[2]); ok {
				return bulkReply(v)
			}
		}
		return nilReply()
	case "hmget":
		if !arity(3) {
			return wrongArity(name)
		}
		h := s.lookup(args[1])
		out := make([]resp, len(args)-2)
		for i, f := range args[2:] {
			out[i] = nilReply()
			if h != nil {
				if v, ok := h.get(f); ok {
					out[i] = bulkReply(v)
				}
			}
		}
		return arrayReply(out)
	case "hgetall":
		if len(args) != 2 {
			return wrongArity(name)
		}
		h := s.lookup(args[1])
		if h == nil {
			if c.proto == 3 && !inScript {
				return resp{kind: '%'}
			}
			return arrayReply(nil)
		}
		out := make([]resp, len(h.fields))
		for i, f := range h.fields {
			out[i] = bulkReply(f)
		}
		if c.proto == 3 && !inScript {
			return resp{kind: '%', arr: out}
		}
		return arrayReply(out)
	case "hset":
		if len(args) < 4 || len(args)%2 != 0 {
			return wrongArity(name)
		}
		s.modify(args[1])
		h := s.lookup(args[1])
		if h == nil {
			h = &redisHash{fields: make([]string, 0, len(args)-2)}
			s.data[args[1]] = h
		}
		n := 0
		for i := 2; i < len(args); i += 2 {
			if h.set(args[i], args[i+1]) {
				n++
			}
		}
		return intReply(int64(n))
	case "del":
		if !arity(2) {
			return wrongArity(name)
		}
		n := 0
		for _, k := range args[1:] {
			if s.lookup(k) != nil {
				s.modify(k)
				delete(s.data, k)
				n++
			}
		}
		return intReply(int64(n))
	case "pexpire":
		if len(args) != 3 {
			return wrongArity(name)
		}
		ms, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil {
			return errorReply("ERR value is not an integer or out of range")
		}
		h := s.lookup(args[1])
		if h == nil {
			return intReply(0)
		}
		s.modify(args[1])
		if ms <= 0 {
			delete(s.data, args[1]) // an expiry in the past deletes the key
			return intReply(1)
		}
		h.expireAt = s.now().Add(time.Duration(ms) * time.Millisecond)
		return intReply(1)
	case "pttl":
		if len(args) != 2 {
			return wrongArity(name)
		}
		h := s.lookup(args[1])
		switch {
		case h == nil:
			return intReply(-2)
		case h.expireAt.IsZero():
			return intReply(-1)
		}
		return intReply(h.expireAt.Sub(s.now()).Milliseconds())
	}
	if inScript {
		return errorReply("ERR This Redis command is not allowed from script")
	}
	switch name {
	case "ping":
		return resp{kind: '+', str: "PONG"}
	case "select":
		return okReply()
	case "hello":
		return s.hello(c, args)
	case "client":
		if len(args) >= 2 {
			switch strings.ToLower(args[1]) {
			case "setinfo", "setname":
				return okReply()
			}
		}
		return errorReply("ERR unknown subcommand '" + strings.Join(args[1:2], "") + "'. Try CLIENT HELP.")
	case "eval":
		if !arity(3) {
			return wrongArity(name)
		}
		sha := sha1hex(args[1])
		s.scripts[sha] = args[1]
		return s.eval(c, sha, args[1], args[2:])
	case "evalsha":
		if !arity(3) {
			return wrongArity(name)
		}
		src, ok := s.scripts[strings.ToLower(args[1])]
		if !ok {
			return errorReply("NOSCRIPT No matching script. Please use EVAL.")
		}
		return s.eval(c, strings.ToLower(args[1]), src, args[2:])
	case "script":
		if len(args) == 3 && strings.EqualFold(args[1], "load") {
			sha := sha1hex(args[2])
			s.scripts[sha] = args[2]
			return bulkReply(sha)
		}
		return errorReply("ERR unknown subcommand")
	case "flushall":
		for k := range s.data {
			s.modify(k)
			delete(s.data, k)
		}
		return okReply()
	}
	return errorReply("ERR unknown command '" + args[0] + "', with args beginning with: ")
}

// eval runs the script src (by its SHA1) with numkeys, keys and args as
// EVAL takes them.
func (s *redisServer) eval(c *connState, sha, src string, rest []string) resp {
	n, err := strconv.Atoi(rest[0])
	if err != nil || n < 0 {
		return errorReply("ERR value is not an integer or out of range")
	}
	if n > len(rest)-1 {
		return errorReply("ERR Number of keys can't be greater than number of args")
	}
	return runScript(s, c, sha, src, rest[1:1+n], rest[1+n:])
}

// hello answers HELLO [protover ...]: the server's facts, as a map in
// RESP3 and a flat list in RESP2.
func (s *redisServer) hello(c *connState, args []string) resp {
	if len(args) >= 2 {
		switch args[1] {
		case "2":
			c.proto = 2
		case "3":
			c.proto = 3
		default:
			return errorReply("NOPROTO unsupported protocol version")
		}
	}
	fields := []resp{
		bulkReply("server"), bulkReply("redis"),
		bulkReply("version"), bulkReply("7.2.4"),
		bulkReply("proto"), intReply(int64(max(c.proto, 2))),
		bulkReply("id"), intReply(1),
		bulkReply("mode"), bulkReply("standalone"),
		bulkReply("role"), bulkReply("master"),
		bulkReply("modules"), arrayReply(nil),
	}
	if c.proto == 3 {
		return resp{kind: '%', arr: fields}
	}
	return arrayReply(fields)
}

func wrongArity(name string) resp {
	return errorReply("ERR wrong number of arguments for '" + name + "' command")
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}
