package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// Run is a run of a job, as the job service reports it.
type Run struct {
	ID   string    `json:"id"`
	Job  string    `json:"job"`
	Tick time.Time `json:"tick"`
}

// JobClient runs jobs on the job service: POST {BaseURL}/runs with an
// Idempotency-Key header runs one and answers when it is done, and GET
// {BaseURL}/runs/{key} finds the run made under key.
type JobClient struct {
	BaseURL string
	HTTP    *http.Client
}

// JobError is a request to the job service that failed. StatusCode is 0
// when no answer came.
type JobError struct {
	Op         string // "run" or "find"
	StatusCode int
	Err        error
}

func (e *JobError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("job service: %s: status %d: %v", e.Op, e.StatusCode, e.Err)
	}
	return fmt.Sprintf("job service: %s: %v", e.Op, e.Err)
}

func (e *JobError) Unwrap() error { return e.Err }

// Refused reports whether the service answered that it did not run the
// job: a status outside 2xx. After any other failure (no answer, or a 2xx
// that cannot be read) the job may have run.
func (e *JobError) Refused() bool {
	return e.StatusCode != 0 && (e.StatusCode < 200 || e.StatusCode > 299)
}

// Run runs the job of t under key and returns the service's run.
//
// The request is not bound to the invocation's deadline: a run that
// outlasts it is stopped by Lambda, and the abandon policy decides what
// becomes of it (see the package documentation). Cutting the request at
// the deadline would only race Lambda's own timeout.
func (c *JobClient) Run(ctx context.Context, key string, t Tick) (Run, error) {
	body, err := json.Marshal(Run{Job: t.Job, Tick: t.Time})
	if err != nil {
		return Run{}, &JobError{Op: "run", Err: err}
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, c.BaseURL+"/runs", bytes.NewReader(body))
	if err != nil {
		return Run{}, &JobError{Op: "run", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	run, _, err := c.do(req, "run")
	return run, err
}

// Find returns the run made under key, and false when there is none: the
// service answers 404 only for a key it never ran a job for.
func (c *JobClient) Find(ctx context.Context, key string) (Run, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.BaseURL+"/runs/"+url.PathEscape(key), nil)
	if err != nil {
		return Run{}, false, &JobError{Op: "find", Err: err}
	}
	return c.do(req, "find")
}

// do sends req and decodes the run it answers; found is false on a 404.
func (c *JobClient) do(req *http.Request, op string) (run Run, found bool, err error) {
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return Run{}, false, &JobError{Op: op, Err: err}
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch {
	case err != nil:
		return Run{}, false, &JobError{Op: op, StatusCode: resp.StatusCode, Err: err}
	case resp.StatusCode == http.StatusNotFound && op == "find":
		return Run{}, false, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return Run{}, false, &JobError{Op: op, StatusCode: resp.StatusCode, Err: fmt.Errorf("reply %q", bytes.TrimSpace(reply))}
	}
	if err := json.Unmarshal(reply, &run); err != nil || run.ID == "" {
		return Run{}, false, &JobError{Op: op, StatusCode: resp.StatusCode, Err: fmt.Errorf("reply without a run id: %q", reply)}
	}
	return run, true, nil
}
