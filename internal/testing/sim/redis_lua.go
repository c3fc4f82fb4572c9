package sim

import (
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// This file runs redis.Store's Lua scripts, unchanged, as a Redis server
// does (https://redis.io/docs/latest/develop/interact/programmability/lua-api/):
// with gopher-lua, a Lua 5.1 like Redis's, KEYS and ARGV set, and
// redis.call and redis.pcall running the modelled server's commands, with
// Redis's conversions between its replies and Lua values. A script runs
// whole, between two events of the schedule: atomic, as on a server.

// luaVM is a Lua state kept for the next script: making one, with its
// libraries, costs more than the scripts it runs.
type luaVM struct {
	L   *lua.LState
	srv *redisServer // the server whose script runs
	c   *connState
}

// luaVMs are the states kept: a list, not a sync.Pool, which drops its
// contents at every garbage collection.
var luaVMs struct {
	sync.Mutex
	free []*luaVM
}

func getLuaVM() *luaVM {
	luaVMs.Lock()
	defer luaVMs.Unlock()
	if n := len(luaVMs.free); n > 0 {
		vm := luaVMs.free[n-1]
		luaVMs.free = luaVMs.free[:n-1]
		return vm
	}
	return nil
}

func putLuaVM(vm *luaVM) {
	vm.srv, vm.c = nil, nil
	luaVMs.Lock()
	defer luaVMs.Unlock()
	luaVMs.free = append(luaVMs.free, vm)
}

// protos are the scripts compiled, by SHA1: compiling is most of a
// script's cost, and the store sends the same five.
var protos sync.Map

func newLuaVM() *luaVM {
	vm := &luaVM{L: lua.NewState(lua.Options{SkipOpenLibs: true})}
	L := vm.L
	// The libraries Redis gives a script, but for cjson, cmsgpack, bit
	// and struct, which the store's scripts do not use.
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	redisTable := L.NewTable()
	L.SetField(redisTable, "call", L.NewFunction(func(L *lua.LState) int { return vm.call(L, true) }))
	L.SetField(redisTable, "pcall", L.NewFunction(func(L *lua.LState) int { return vm.call(L, false) }))
	L.SetField(redisTable, "error_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		L.SetField(t, "err", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	L.SetField(redisTable, "status_reply", L.NewFunction(func(L *lua.LState) int {
		t := L.NewTable()
		L.SetField(t, "ok", lua.LString(L.CheckString(1)))
		L.Push(t)
		return 1
	}))
	// The modelled server has one user, which may send every command.
	L.SetField(redisTable, "acl_check_cmd", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LTrue)
		return 1
	}))
	L.SetGlobal("redis", redisTable)
	return vm
}

// call is redis.call (raise) and redis.pcall (not raise): it runs the
// command its arguments make on the script's server.
func (vm *luaVM) call(L *lua.LState, raise bool) int {
	n := L.GetTop()
	args := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args = append(args, string(v))
		case lua.LNumber:
			args = append(args, v.String())
		default:
			L.RaiseError("Lua redis lib command arguments must be strings or integers")
		}
	}
	r := vm.srv.command(vm.c, args, true)
	if r.isError() && raise {
		t := L.NewTable()
		L.SetField(t, "err", lua.LString(r.str))
		L.Error(t, 0)
	}
	L.Push(toLua(L, r))
	return 1
}

// toLua is a reply as redis.call gives it to a script.
func toLua(L *lua.LState, r resp) lua.LValue {
	switch r.kind {
	case ':':
		return lua.LNumber(r.n)
	case '$':
		return lua.LString(r.str)
	case '_':
		return lua.LFalse
	case '+', '-':
		t := L.NewTable()
		field := "ok"
		if r.kind == '-' {
			field = "err"
		}
		L.SetField(t, field, lua.LString(r.str))
		return t
	}
	t := L.CreateTable(len(r.arr), 0)
	for _, e := range r.arr {
		t.Append(toLua(L, e))
	}
	return t
}

// fromLua is a script's return value as the server answers it.
func fromLua(v lua.LValue) resp {
	switch v := v.(type) {
	case lua.LNumber:
		return intReply(int64(v))
	case lua.LString:
		return bulkReply(string(v))
	case lua.LBool:
		if v {
			return intReply(1)
		}
	case *lua.LTable:
		if e, ok := v.RawGetString("err").(lua.LString); ok {
			return errorReply(string(e))
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			return resp{kind: '+', str: string(s)}
		}
		var out []resp
		for i := 1; ; i++ {
			e := v.RawGetInt(i)
			if e == lua.LNil {
				break
			}
			out = append(out, fromLua(e))
		}
		return arrayReply(out)
	}
	return nilReply()
}

// runScript runs the script src, whose SHA1 is sha, on s.
func runScript(s *redisServer, c *connState, sha, src string, keys, argv []string) resp {
	proto, err := compiled(sha, src)
	if err != nil {
		return errorReply("ERR Error compiling script (new function): " + err.Error())
	}
	vm := getLuaVM()
	if vm == nil {
		vm = newLuaVM()
	}
	defer putLuaVM(vm)
	vm.srv, vm.c = s, c
	L := vm.L
	L.SetGlobal("KEYS", strings2lua(L, keys))
	L.SetGlobal("ARGV", strings2lua(L, argv))
	L.Push(L.NewFunctionFromProto(proto))
	if err := L.PCall(0, 1, nil); err != nil {
		L.SetTop(0)
		if api, ok := err.(*lua.ApiError); ok {
			if t, ok := api.Object.(*lua.LTable); ok {
				if e, ok := t.RawGetString("err").(lua.LString); ok {
					return errorReply(string(e) + " script: " + sha + ", on @user_script:1.")
				}
			}
			return errorReply("ERR user_script:1: " + api.Object.String() + " script: " + sha + ", on @user_script:1.")
		}
		return errorReply("ERR " + err.Error())
	}
	ret := L.Get(-1)
	L.Pop(1)
	return fromLua(ret)
}

func strings2lua(L *lua.LState, xs []string) *lua.LTable {
	t := L.CreateTable(len(xs), 0)
	for _, x := range xs {
		t.Append(lua.LString(x))
	}
	return t
}

func compiled(sha, src string) (*lua.FunctionProto, error) {
	if p, ok := protos.Load(sha); ok {
		return p.(*lua.FunctionProto), nil
	}
	chunk, err := parse.Parse(strings.NewReader(src), "@user_script")
	if err != nil {
		return nil, err
	}
	p, err := lua.Compile(chunk, "@user_script")
	if err != nil {
		return nil, err
	}
	protos.Store(sha, p)
	return p, nil
}
