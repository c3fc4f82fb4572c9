package faultproxy

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer answers every command with "+OK" and records the names of
// the commands it received.
type fakeServer struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
	wg   sync.WaitGroup
}

func newFakeServer(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln}
	s.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					_, name, args, err := readCommand(r)
					if err != nil {
						return
					}
					s.mu.Lock()
					s.seen = append(s.seen, strings.TrimSpace(name+" "+string(bytesJoin(args))))
					s.mu.Unlock()
					io.WriteString(c, "+OK\r\n")
				}
			})
		}
	})
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// newProxiedServer returns a fake server and a RESP proxy in front of
// it, closed when the test ends.
func newProxiedServer(t *testing.T) (*fakeServer, *Proxy) {
	t.Helper()
	srv := newFakeServer(t)
	p, err := NewRESP(srv.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return srv, p
}

func bytesJoin(args [][]byte) []byte {
	var out []byte
	for i, a := range args {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, a...)
	}
	return out
}

func (s *fakeServer) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// send writes one command on a fresh connection through p and returns the
// reply line, or the error that ended the connection.
func send(t *testing.T, p *Proxy, args ...string) (string, error) {
	t.Helper()
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	cmd := fmt.Sprintf("*%d\r\n", len(args))
	for _, a := range args {
		cmd += fmt.Sprintf("$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, cmd); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), err
}

func TestFaults(t *testing.T) {
	t.Parallel()
	const script = "return 1"
	sum := sha1.Sum([]byte(script))
	sha := hex.EncodeToString(sum[:])
	tests := []struct {
		name       string
		rule       Rule
		cmd        []string
		wantReply  bool // the client gets "+OK"
		wantServer bool // the server got the command
	}{
		{"no rule", Rule{}, []string{"SET", "k", "v"}, true, true},
		{"reset before server", Rule{Fault: ResetBeforeServer, Op: "set"}, []string{"SET", "k", "v"}, false, false},
		{"reply lost", Rule{Fault: ReplyLost, Op: "SET"}, []string{"SET", "k", "v"}, false, true},
		{"latency", Rule{Fault: Latency, Op: "SET", Delay: 50 * time.Millisecond}, []string{"SET", "k", "v"}, true, true},
		{"other command untouched", Rule{Fault: ResetBeforeServer, Op: "GET"}, []string{"SET", "k", "v"}, true, true},
		{"evalsha of the script", Rule{Fault: ReplyLost, Script: sha}, []string{"EVALSHA", sha, "0"}, false, true},
		{"eval of the script", Rule{Fault: ResetBeforeServer, Script: strings.ToUpper(sha)}, []string{"EVAL", script, "0"}, false, false},
		{"eval of another script", Rule{Fault: ResetBeforeServer, Script: sha}, []string{"EVAL", "return 2", "0"}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, p := newProxiedServer(t)
			if tt.rule.Fault != 0 {
				tt.rule.Times = 1
				p.Set(tt.rule)
			}
			start := time.Now()
			reply, err := send(t, p, tt.cmd...)
			if tt.wantReply {
				if err != nil || reply != "+OK" {
					t.Fatalf("reply = %q, %v; want +OK", reply, err)
				}
			} else if err == nil {
				t.Fatalf("reply = %q, want the connection broken", reply)
			}
			if tt.rule.Fault == Latency && time.Since(start) < tt.rule.Delay {
				t.Errorf("reply after %v, want at least %v", time.Since(start), tt.rule.Delay)
			}
			// The command reached the server, if at all, before the reply
			// (or its loss); a second command on a new connection is
			// served after it.
			if _, err := send(t, p, "PING"); err != nil {
				t.Fatalf("PING after the fault: %v", err)
			}
			got := srv.received()
			if reached := len(got) == 2; reached != tt.wantServer {
				t.Errorf("server received %q; want the command received: %v", got, tt.wantServer)
			}
			c := p.Counts()
			wantInjected := 0
			if tt.rule.Fault != 0 && !strings.HasPrefix(tt.name, "other") && !strings.Contains(tt.name, "another") {
				wantInjected = 1
			}
			if n := c.InjectedFault(tt.rule.Fault); n != wantInjected {
				t.Errorf("%d faults injected, want %d", n, wantInjected)
			}
		})
	}
}

// TestTimes: a rule breaks Times commands, then lets the rest through.
func TestTimes(t *testing.T) {
	t.Parallel()
	_, p := newProxiedServer(t)
	p.Set(Rule{Fault: ResetBeforeServer, Times: 2})
	var broken int
	for range 4 {
		if _, err := send(t, p, "PING"); err != nil {
			broken++
		}
	}
	if broken != 2 {
		t.Errorf("%d commands broken, want 2", broken)
	}
	if c := p.Counts(); c.Requests["PING"] != 4 || c.Forwarded["PING"] != 2 {
		t.Errorf("counts %+v, want 4 PINGs received and 2 forwarded", c)
	}
}

// TestPipelined: commands sent back to back on one connection each get
// their own reply, and a lost reply ends the connection after the replies
// before it.
func TestPipelined(t *testing.T) {
	t.Parallel()
	_, p := newProxiedServer(t)
	p.Set(Rule{Fault: ReplyLost, Op: "DEL", Times: 1})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	io.WriteString(c, "*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n*1\r\n$4\r\nPING\r\n")
	b, err := io.ReadAll(c)
	if got := string(b); got != "+OK\r\n+OK\r\n" {
		t.Errorf("read %q, want two replies and then the end", got)
	}
	var opErr *net.OpError
	if err != nil && !errors.As(err, &opErr) {
		t.Errorf("read error %v", err)
	}
}

// TestReadValue reads RESP3 replies whole.
func TestReadValue(t *testing.T) {
	t.Parallel()
	values := []string{
		"+OK\r\n",
		"-ERR no\r\n",
		":42\r\n",
		"_\r\n",
		"#t\r\n",
		",1.5\r\n",
		"(123456789012345678901234567890\r\n",
		"$5\r\nhe\r\nl\r\n",
		"$-1\r\n",
		"!3\r\nerr\r\n",
		"=7\r\ntxt:abc\r\n",
		"*2\r\n$1\r\na\r\n:1\r\n",
		"*-1\r\n",
		"~1\r\n+x\r\n",
		"%1\r\n+k\r\n*1\r\n+v\r\n",
		"|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n",
		">2\r\n+message\r\n+x\r\n",
	}
	for _, v := range values {
		const next = "+NEXT\r\n"
		r := bufio.NewReader(strings.NewReader(v + next))
		got, err := readValue(r, nil)
		if err != nil || string(got) != v {
			t.Errorf("readValue(%q) = %q, %v", v, got, err)
			continue
		}
		if rest, _ := io.ReadAll(r); string(rest) != next {
			t.Errorf("readValue(%q) left %q", v, rest)
		}
	}
	for _, bad := range []string{"?x\r\n", "$x\r\n", "+OK\n", "$5\r\nab"} {
		if _, err := readValue(bufio.NewReader(strings.NewReader(bad)), nil); err == nil {
			t.Errorf("readValue(%q) = nil error", bad)
		}
	}
}

// TestRESPRules: a RESP proxy refuses the faults of HTTP, and runs Then
// when a rule fires, after the server applied a command whose reply is
// lost.
func TestRESPRules(t *testing.T) {
	t.Parallel()
	srv, p := newProxiedServer(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Set of a Throttling rule on a RESP proxy did not panic")
			}
		}()
		p.Set(Rule{Fault: Throttling})
	}()
	then := make(chan []string, 1) // the reset reaches the client through the kernel, which the race detector cannot see
	p.Set(Rule{Fault: ReplyLost, Op: "SET", Times: 1, Then: func() { then <- srv.received() }})
	if _, err := send(t, p, "SET", "k", "v"); err == nil {
		t.Fatal("SET answered, want the connection reset")
	}
	if atThen := <-then; len(atThen) != 1 {
		t.Errorf("Then ran when the server had received %q, want the SET", atThen)
	}
}
