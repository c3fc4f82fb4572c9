package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"
)

// request is a request to a Powertools function (see testdata/function.py).
type request struct {
	Op         string          `json:"op"`
	Table      string          `json:"table,omitempty"`
	SK         string          `json:"sk,omitempty"`
	Expr       string          `json:"expr,omitempty"`
	Validation string          `json:"validation,omitempty"`
	Event      string          `json:"event,omitempty"`
	Response   json.RawMessage `json:"response,omitempty"`
	ID         string          `json:"id,omitempty"`
}

// answer is a Powertools function's answer: its invocation's result or
// error (the exception's class and message), and how often its handler
// ran; or, for a hold, that the handler is running.
type answer struct {
	Result json.RawMessage `json:"result"`
	Error  string          `json:"error"`
	Calls  int             `json:"calls"`
	Held   bool            `json:"held"`
}

func (a answer) String() string {
	if a.Held {
		return "held"
	}
	return fmt.Sprintf("result %s, error %q, %d handler calls", a.Result, a.Error, a.Calls)
}

// function is a running Powertools function.
type function struct {
	rt  runtime
	in  io.WriteCloser
	out *bufio.Scanner
}

func startFunction(t *testing.T, rt runtime, endpoint string) *function {
	t.Helper()
	cmd := rt.command("function")
	cmd.Env = append(cmd.Environ(), "AWS_LAMBDA_FUNCTION_NAME="+functionName, "INTEROP_ENDPOINT="+endpoint, "POWERTOOLS_LOG_LEVEL=ERROR")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", rt.name, err)
	}
	t.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s function: %v", rt.name, err)
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	return &function{rt: rt, in: in, out: sc}
}

func (f *function) do(t *testing.T, req request) answer {
	t.Helper()
	b, _ := json.Marshal(req)
	if _, err := f.in.Write(append(b, '\n')); err != nil {
		t.Fatalf("%s: %v", f.rt.name, err)
	}
	if !f.out.Scan() {
		t.Fatalf("%s function ended: %v", f.rt.name, f.out.Err())
	}
	var a answer
	if err := json.Unmarshal(f.out.Bytes(), &a); err != nil {
		t.Fatalf("%s: %v: %s", f.rt.name, err, f.out.Bytes())
	}
	return a
}
