package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/idempotencytest"
)

// The differential test of the command against the function. The oracle
// is the function as the separate program it is (testdata/difffn, built
// with go build and run as a process, with its own environment), not the
// engine the command embeds, which would only agree with itself. For
// every combination of a record state, an event and the function's
// settings, on the in-memory store and on moto, the test writes the
// record, asks inspect (and list; and forget, dry then real, or resolve,
// where the command can write the function's store), then sends the event
// to the function over the same records, and requires that they agree on
// whether the handler runs, the outcome, the error's type, the lease end it
// gives and the response's bytes.

// diffSetting is one configuration of the function: its environment, as
// its template gives it, and what its code gives outright.
type diffSetting struct {
	name        string
	env         map[string]string
	keyRequired bool
	// typeScript: records are written as Powertools TypeScript writes
	// them.
	typeScript bool
}

func diffSettings() []diffSetting {
	with := func(kv ...string) map[string]string {
		env := map[string]string{"POWERTOOLS_IDEMPOTENCY_EVENT_KEY_JMESPATH": "order_id"}
		for i := 0; i < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	const (
		validation = "POWERTOOLS_IDEMPOTENCY_PAYLOAD_VALIDATION_JMESPATH"
		policy     = "POWERTOOLS_IDEMPOTENCY_ABANDON_POLICY"
	)
	return []diffSetting{
		{name: "plain", env: with()},
		{name: "validation", env: with(validation, "amount")},
		{name: "block", env: with(validation, "amount", policy, "block")},
		{name: "uncertain", env: with(validation, "amount", policy, "uncertain")},
		{name: "block, no validation", env: with(policy, "block")},
		{name: "waiting", env: with(validation, "amount", "POWERTOOLS_IDEMPOTENCY_WAIT_FOR_IN_PROGRESS", "true")},
		{name: "key required", env: with(validation, "amount"), keyRequired: true},
		{name: "python", env: with(validation, "amount", "POWERTOOLS_IDEMPOTENCY_COMPATIBILITY", "python", "POWERTOOLS_IDEMPOTENCY_PYTHON_HANDLER", "app.handler")},
		{name: "typescript", env: with(validation, "amount", "POWERTOOLS_IDEMPOTENCY_COMPATIBILITY", "typescript"), typeScript: true},
		{name: "key prefix", env: with(validation, "amount", "POWERTOOLS_IDEMPOTENCY_KEY_PREFIX", "shop")},
		{name: "disabled", env: with(validation, "amount", "POWERTOOLS_IDEMPOTENCY_DISABLED", "true")},
	}
}

// diffRecord is a record state, at now, of the key of the same request;
// nil for none. hash is that request's payload hash ("" without
// validation).
type diffRecord struct {
	name string
	make func(now time.Time, hash string) *idempotency.Record
	// corrupted: written as an item the store cannot read.
	corrupted bool
	// otherPrefix: written under another key prefix than the function's.
	otherPrefix bool
}

func diffRecords() []diffRecord {
	inProgress := func(leaseEnd, deadline, expiry time.Duration, hashed bool) func(time.Time, string) *idempotency.Record {
		return func(now time.Time, hash string) *idempotency.Record {
			r := &idempotency.Record{Status: idempotency.StatusInProgress, Expiry: now.Add(expiry), LeaseEnd: now.Add(leaseEnd), LeaseToken: "holder"}
			if deadline != 0 {
				r.Deadline = now.Add(deadline)
			}
			if hashed {
				r.PayloadHash = hash
			}
			return r
		}
	}
	completed := func(expiry time.Duration, hashed bool) func(time.Time, string) *idempotency.Record {
		return func(now time.Time, hash string) *idempotency.Record {
			r := &idempotency.Record{Status: idempotency.StatusComplete, Expiry: now.Add(expiry), LeaseToken: "holder",
				Response: []byte(`{"order_id":"stored","charged":100}`), CompletedAt: now.Add(-time.Minute)}
			if hashed {
				r.PayloadHash = hash
			}
			return r
		}
	}
	return []diffRecord{
		{name: "none", make: func(time.Time, string) *idempotency.Record { return nil }},
		{name: "in progress, live", make: inProgress(10*time.Minute, 0, time.Hour, true)},
		{name: "in progress, lease ended", make: inProgress(-5*time.Minute, 0, 55*time.Minute, true)},
		{name: "in progress past its deadline, held", make: inProgress(55*time.Minute, -5*time.Minute, 55*time.Minute, true)},
		{name: "in progress before its deadline, held", make: inProgress(time.Hour, 10*time.Minute, time.Hour, true)},
		{name: "in progress, no hash", make: inProgress(10*time.Minute, 0, time.Hour, false)},
		{name: "completed", make: completed(59*time.Minute, true)},
		{name: "completed, no hash", make: completed(59*time.Minute, false)},
		{name: "completed, response not stored", make: func(now time.Time, hash string) *idempotency.Record {
			return &idempotency.Record{Status: idempotency.StatusComplete, Expiry: now.Add(59 * time.Minute), LeaseToken: "holder", PayloadHash: hash,
				ResponseOmitted: true, ResponseOmittedReason: idempotency.ReasonTooLarge, CompletedAt: now.Add(-time.Minute)}
		}},
		{name: "uncertain", make: func(now time.Time, hash string) *idempotency.Record {
			return &idempotency.Record{Status: idempotency.StatusUncertain, Expiry: now.Add(59 * time.Minute), LeaseToken: "holder", PayloadHash: hash}
		}},
		{name: "uncertain, being reconciled", make: func(now time.Time, hash string) *idempotency.Record {
			return &idempotency.Record{Status: idempotency.StatusUncertain, Expiry: now.Add(59 * time.Minute), LeaseEnd: now.Add(5 * time.Minute), LeaseToken: "reconciler", PayloadHash: hash}
		}},
		{name: "expired", make: completed(-time.Minute, true)},
		{name: "corrupted", corrupted: true, make: func(now time.Time, hash string) *idempotency.Record {
			return &idempotency.Record{Status: "PAUSED", Expiry: now.Add(time.Hour), LeaseToken: "holder", PayloadHash: hash}
		}},
		{name: "under another prefix", otherPrefix: true, make: completed(59*time.Minute, true)},
	}
}

// diffEvents are the events of a case, for its order id: the same request
// as the record's, another payload under its key, one that does not decode
// into the function's input type, one without a key, and one the function
// refuses as it cannot be read one way.
func diffEvents(id string) []struct{ name, event string } {
	return []struct{ name, event string }{
		{"the same request", fmt.Sprintf(`{"order_id":%q,"amount":100}`, id)},
		{"another payload", fmt.Sprintf(`{"order_id":%q,"amount":999}`, id)},
		{"undecodable", fmt.Sprintf(`{"order_id":%q,"amount":"abc"}`, id)},
		{"no key", `{"amount":100}`},
		{"invalid", fmt.Sprintf(`{"order_id":%q,"order_id":"x","amount":100}`, id)},
	}
}

// undecodable is the name of the event that does not decode.
const undecodableEvent = "undecodable"

// diffCase is one combination: a record state and an event, under a
// setting.
type diffCase struct {
	record     diffRecord
	event      string // its name
	body       string
	key, hash  string // of the same request
	seed       *idempotency.Record
	inspection inspection
	status     int
}

// expected is the answer inspect gives for the delivery of c's event to
// a function whose input type the test knows: the event named undecodable
// does not decode into it.
func (c *diffCase) expected() verdictView {
	if c.event == undecodableEvent && c.inspection.Next.Undecodable != nil {
		return *c.inspection.Next.Undecodable
	}
	return c.inspection.Next
}

// disagreement returns how v and a differ, or "".
func disagreement(v verdictView, a answer, stored *string) string {
	var d []string
	if v.RunsHandler != a.Ran {
		d = append(d, fmt.Sprintf("runs the handler: command %v, function %v", v.RunsHandler, a.Ran))
	}
	if v.Outcome != a.Outcome {
		d = append(d, fmt.Sprintf("outcome: command %q, function %q", v.Outcome, a.Outcome))
	}
	if v.Error != a.ErrorType {
		d = append(d, fmt.Sprintf("error: command %s, function %s (%s)", orNone(v.Error), orNone(a.ErrorType), a.Error))
	}
	if v.LeaseEnd != a.LeaseEnd {
		d = append(d, fmt.Sprintf("lease end: command %q, function %q", v.LeaseEnd, a.LeaseEnd))
	}
	if !a.Ran && a.ErrorType == "" && (stored == nil || *stored != string(a.Response)) {
		want := "none"
		if stored != nil {
			want = *stored
		}
		d = append(d, fmt.Sprintf("response: command %s, function %s", want, a.Response))
	}
	return strings.Join(d, "; ")
}

// TestCommandAgreesWithTheFunction is the differential test (see the top
// of this file). It reports how many combinations it compared.
func TestCommandAgreesWithTheFunction(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the function for every combination")
	}
	stores := []func(*testing.T) *diffStore{
		func(*testing.T) *diffStore { return newMemoryDiffStore() },
		newMotoDiffStore,
	}
	counts := map[string]int{}
	for _, newStore := range stores {
		s := newStore(t)
		t.Run(s.name, func(t *testing.T) {
			for si, setting := range diffSettings() {
				t.Run(setting.name, func(t *testing.T) {
					compareSetting(t, s, si, setting, counts)
				})
			}
		})
	}
	keys := slices.Sorted(maps.Keys(counts))
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s %d", k, counts[k]))
	}
	t.Logf("combinations compared: %s", strings.Join(lines, ", "))
}

// compareSetting compares every record state and event under setting on
// s: inspect and the function on each; list on each record; and, where
// the command can write the function's store, forget and resolve.
func compareSetting(t *testing.T, s *diffStore, si int, setting diffSetting, counts map[string]int) {
	env := map[string]string{"AWS_LAMBDA_FUNCTION_NAME": "difffn"}
	maps.Copy(env, setting.env)
	fnEnv := maps.Clone(env)
	maps.Copy(fnEnv, s.env)
	if setting.keyRequired {
		fnEnv["DIFFFN_KEY_REQUIRED"] = "true"
	}
	fn := startFunction(t, fnEnv)
	tmpl := diffTemplate(t, setting)
	h := s.harness(t)
	keys := keysOf(t, env, setting.keyRequired)

	now := time.Now()
	var cases []*diffCase
	for ri, rec := range diffRecords() {
		for ei := range diffEvents("") {
			events := diffEvents(fmt.Sprintf("s%d-r%d-e%d", si, ri, ei))
			ev, same := events[ei], events[0].event
			c := &diffCase{record: rec, event: ev.name, body: ev.event}
			c.key, c.hash = keys(same)
			c.seed = seed(rec, now, c.key, c.hash)
			if c.seed != nil {
				s.put(t, c.seed, rec.corrupted, setting.typeScript)
			}
			cases = append(cases, c)
		}
	}

	// The command first, then the function, which may change the record.
	for _, c := range cases {
		args := append(append([]string{"--response", "--template", tmpl, "--resource", "Fn"}, s.where...), writeFile(t, "event.json", c.body))
		r := h.run(t, append([]string{"inspect", "--json"}, args...)...)
		c.status = r.status
		if err := json.Unmarshal([]byte(r.stdout), &c.inspection); err != nil {
			t.Fatalf("%s, %s: inspect --json wrote %v", c.record.name, c.event, r)
		}
	}
	listed := listLines(t, h, s, env)
	for _, c := range cases {
		var seed *idempotency.Record
		if s.seedsInline {
			seed = c.seed
		}
		a := fn.deliver(t, c.body, seed)
		counts["inspect on "+s.name]++
		v := c.expected()
		if d := disagreement(v, a, c.inspection.Response); d != "" {
			t.Errorf("%s, %s: the command and the function disagree: %s\n  command:  %+v\n  function: %v", c.record.name, c.event, d, v, a)
		}
		if refused := c.inspection.Key == "" && c.inspection.Next.Error != ""; (c.status == exitFailed) != refused || (c.status != exitOK && c.status != exitFailed) {
			t.Errorf("%s, %s: inspect exit %d for %+v", c.record.name, c.event, c.status, c.inspection.Next)
		}
		if c.event != "the same request" {
			continue
		}
		// list: a delivery of the same request, by the record's key.
		line, ok := listed[c.key]
		switch {
		case c.seed == nil || c.record.otherPrefix || c.record.corrupted || !c.seed.Live(now) && c.seed.Status != idempotency.StatusInProgress:
			// Not the function's record, not a record, or expired.
			if ok {
				t.Errorf("%s: list lists %s", c.record.name, c.key)
			}
		case !ok:
			t.Errorf("%s: list does not list %s", c.record.name, c.key)
		case c.seed.PayloadHash == c.hash:
			// Without the event, list cannot check the payload: only a
			// record of the same payload is compared.
			counts["list on "+s.name]++
			if d := disagreement(line.Delivery, a, nil); d != "" && !strings.HasPrefix(d, "response") {
				t.Errorf("%s: list and the function disagree: %s\n  list:     %+v\n  function: %v", c.record.name, d, line.Delivery, a)
			}
		}
	}
	if !s.seedsInline {
		compareWrites(t, s, si, setting, h, tmpl, fn, keys, counts)
	}
}

// compareWrites seeds each record state again and writes it with the
// command, as an operator does: forget (its dry answer first, which must
// be the same) or, for an UNCERTAIN record, resolve --completed. Then
// inspect and the function must agree on what a delivery of the same
// request meets: after a delete, the handler runs; after a completion,
// the response given is replayed, in the function's format.
func compareWrites(t *testing.T, s *diffStore, si int, setting diffSetting, h *harness, tmpl string, fn *function, keys func(string) (string, string), counts map[string]int) {
	now := time.Now()
	response := writeFile(t, "response.json", `{"order_id":"resolved","charged":1}`)
	for ri, rec := range diffRecords() {
		body := diffEvents(fmt.Sprintf("s%d-r%d-write", si, ri))[0].event
		key, hash := keys(body)
		sd := seed(rec, now, key, hash)
		if sd != nil {
			s.put(t, sd, rec.corrupted, setting.typeScript)
		}
		args := append(append([]string{"--template", tmpl, "--resource", "Fn"}, s.where...), writeFile(t, "event.json", body))
		command := "forget"
		var done result
		if sd != nil && sd.Status == idempotency.StatusUncertain {
			command = "resolve"
			done = h.run(t, append([]string{"resolve", "--completed", "--response", response}, args...)...)
		} else {
			dry := h.run(t, append([]string{"forget", "--dry-run"}, args...)...)
			done = h.run(t, append([]string{"forget"}, args...)...)
			if dry.status != done.status {
				t.Errorf("%s: forget --dry-run exits %d, forget %d\n%v\n%v", rec.name, dry.status, done.status, dry, done)
			}
		}
		var after inspection
		r := h.run(t, append([]string{"inspect", "--json", "--response"}, args...)...)
		if err := json.Unmarshal([]byte(r.stdout), &after); err != nil {
			t.Fatalf("%s: inspect after %s: %v", rec.name, command, r)
		}
		a := fn.deliver(t, body, nil)
		counts[command+" on "+s.name]++
		if d := disagreement(after.Next, a, after.Response); d != "" {
			t.Errorf("%s: after %s (exit %d), the command and the function disagree: %s\n  command:  %+v\n  function: %v", rec.name, command, done.status, d, after.Next, a)
		}
		switch {
		case done.status != exitOK:
		case command == "forget" && (!a.Ran || a.ErrorType != ""):
			t.Errorf("%s: after forget (%s), the function does not run the handler: %v", rec.name, strings.TrimSpace(done.stdout), a)
		case command == "resolve" && after.Next.Outcome != "" && (a.Ran || a.ErrorType != "" || !sameJSON(a.Response, readFile(t, response))):
			// (A function with idempotency off runs the handler anyway.)
			t.Errorf("%s: after resolve, the function does not replay the response given: %v", rec.name, a)
		}
	}
}

// seed returns the record state rec at now for key, as the store holds
// it (times at its precision).
func seed(rec diffRecord, now time.Time, key, hash string) *idempotency.Record {
	r := rec.make(now, hash)
	if r == nil {
		return nil
	}
	r.Key = key
	if rec.otherPrefix {
		_, h, _ := strings.Cut(key, "#")
		r.Key = "otherfn#" + h
	}
	r.Expiry = r.Expiry.Truncate(time.Second)
	r.LeaseEnd = r.LeaseEnd.Truncate(time.Millisecond)
	r.Deadline = r.Deadline.Truncate(time.Millisecond)
	r.CompletedAt = r.CompletedAt.Truncate(time.Millisecond)
	return r
}

// keysOf returns a function that computes an event's key and payload hash
// under env, with the library, to write the records of a setting.
func keysOf(t *testing.T, env map[string]string, keyRequired bool) func(string) (string, string) {
	h, err := idempotency.New(idempotencytest.NewStore(), func(context.Context, json.RawMessage) (string, error) { return "", nil },
		idempotency.WithEnvironment(env), idempotency.WithKeyRequired(keyRequired), idempotency.WithLogger(discard))
	if err != nil {
		t.Fatal(err)
	}
	return func(event string) (string, string) {
		key, hash, err := h.KeyOf([]byte(event))
		if err != nil || key == "" {
			t.Fatalf("the key of %s: %q, %v", event, key, err)
		}
		return key, hash
	}
}

// diffTemplate writes the template of the function of setting: its
// variables, its name, and the declaration of what its code gives.
func diffTemplate(t *testing.T, setting diffSetting) string {
	var b strings.Builder
	b.WriteString("Resources:\n  Fn:\n    Type: AWS::Serverless::Function\n")
	if setting.keyRequired {
		b.WriteString("    Metadata:\n      Idempotency:\n        KeyRequired: true\n")
	}
	b.WriteString("    Properties:\n      FunctionName: difffn\n      Environment:\n        Variables:\n")
	for _, k := range slices.Sorted(maps.Keys(setting.env)) {
		fmt.Fprintf(&b, "          %s: %q\n", k, setting.env[k])
	}
	return writeFile(t, "template.yaml", b.String())
}

// listLines runs list --json with the function's environment, and returns
// its lines by key.
func listLines(t *testing.T, h *harness, s *diffStore, env map[string]string) map[string]listLine {
	t.Helper()
	lh := *h
	lh.env = env
	r := lh.run(t, append([]string{"list", "--json"}, s.where...)...).want(t, exitOK)
	lines := map[string]listLine{}
	for line := range strings.Lines(r.stdout) {
		var l listLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("list --json: %q: %v", line, err)
		}
		lines[l.Key] = l
	}
	return lines
}

// sameJSON reports whether a and b are the same JSON value, members in
// any order (Powertools TypeScript keeps a response as DynamoDB's types,
// and gives its members back in key order).
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
