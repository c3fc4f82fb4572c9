package dynamo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/gopowertools/lambda/internal/testing/fake"
	"github.com/gopowertools/lambda/internal/testing/faultproxy"
	"github.com/gopowertools/lambda/internal/testing/faultworld"
	"github.com/gopowertools/lambda/powertools/idempotency"
)

// The soak: many invocations, some of them duplicates, from many
// goroutines, with faults injected at random into every kind of request,
// on moto through the fault proxy. `make test` runs a short one; `make
// soak` the full one (SOAK_INVOCATIONS=10000).

// soakSettings are read from the environment, with the short run's
// defaults. SOAK_SERVER (moto or dynalite, default moto) is read by
// the soak test itself.
type soakSettings struct {
	invocations int     // SOAK_INVOCATIONS, default 500
	faultRate   float64 // SOAK_FAULT_RATE: the chance that a request gets a fault, default 0.06
	seed        uint64  // SOAK_SEED, default 1
}

const (
	soakWorkers   = 20
	soakDupShare  = 0.10 // of the invocations, duplicates of a key already sent
	soakDecline   = 0.05 // of the keys, whose first handler call fails
	soakLease     = 5 * time.Second
	soakLatency   = 5 * time.Millisecond
	soakDupWindow = 50 // a duplicate repeats one of the last keys sent, so that some run while the first is in flight
)

func soakFromEnv(t *testing.T) soakSettings {
	s := soakSettings{invocations: 500, faultRate: 0.06, seed: 1}
	if v := os.Getenv("SOAK_INVOCATIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("SOAK_INVOCATIONS=%q: want a number >= 10", v)
		}
		s.invocations = n
	}
	if v := os.Getenv("SOAK_FAULT_RATE"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || r < 0 || r >= 1 {
			t.Fatalf("SOAK_FAULT_RATE=%q: want a number in [0, 1)", v)
		}
		s.faultRate = r
	}
	if v := os.Getenv("SOAK_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SOAK_SEED=%q: %v", v, err)
		}
		s.seed = n
	}
	return s
}

// soakPlan returns the order ids to invoke, in order: distinct keys, and a
// share of duplicates of recent ones.
func soakPlan(s soakSettings) (plan []string, keys int) {
	r := rand.New(rand.NewPCG(s.seed, 2))
	for len(plan) < s.invocations {
		if keys > 0 && r.Float64() < soakDupShare {
			back := min(keys, soakDupWindow)
			plan = append(plan, fmt.Sprintf("o%d", keys-1-r.IntN(back)))
			continue
		}
		plan = append(plan, fmt.Sprintf("o%d", keys))
		keys++
	}
	return plan, keys
}

// soakRules spread the fault rate evenly over the six faults, on every
// operation.
func soakRules(rate float64) []faultproxy.Rule {
	var rules []faultproxy.Rule
	for i, f := range faultproxy.HTTPFaults {
		// The rules are tried in order, so the i-th only sees what the
		// ones before let through: its own rate makes up for that.
		share := rate / float64(len(faultproxy.HTTPFaults))
		r := faultproxy.Rule{Fault: f, Rate: share / (1 - share*float64(i))}
		if f == faultproxy.Latency {
			r.Delay = soakLatency
		}
		rules = append(rules, r)
	}
	return rules
}

// leaseLedger is a Store that passes everything to the real one and counts,
// per key, the leases taken and the writes that failed.
type leaseLedger struct {
	idempotency.Store
	mu           sync.Mutex
	leases       map[string]int
	failedWrites map[string]int // Acquire, Complete or Release that returned an error
	failedOps    map[string]int // the same, by operation
	// failedCompletes counts, per key, the Completes that returned an
	// error: the one failure after which a charge may run again, since
	// the response was never stored (a failed Acquire runs nothing, and a
	// Release follows a handler that charged nothing).
	failedCompletes map[string]int
	// ownFound counts the Acquires that met the invocation's own record:
	// an earlier attempt's put was applied but its reply lost.
	ownFound int
}

func (l *leaseLedger) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	existing, err := l.Store.Acquire(ctx, rec, now)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case err != nil:
		l.failedWrites[rec.Key]++
		l.failedOps["acquire"]++
	case existing == nil:
		l.leases[rec.Key]++
	case existing.LeaseToken == rec.LeaseToken:
		l.leases[rec.Key]++
		l.ownFound++
	}
	return existing, err
}

func (l *leaseLedger) Complete(ctx context.Context, rec *idempotency.Record) error {
	err := l.Store.Complete(ctx, rec)
	if err != nil {
		l.mu.Lock()
		l.failedWrites[rec.Key]++
		l.failedOps["complete"]++
		l.failedCompletes[rec.Key]++
		l.mu.Unlock()
	}
	return err
}

func (l *leaseLedger) Release(ctx context.Context, key, token string) error {
	err := l.Store.Release(ctx, key, token)
	if err != nil {
		l.mu.Lock()
		l.failedWrites[key]++
		l.failedOps["release"]++
		l.mu.Unlock()
	}
	return err
}

// outcome classes of one call.
const (
	outCharged    = "the charge (run or replay)"
	outDeclined   = "the handler's own error"
	outInProgress = "InProgressError"
	outPersist    = "PersistenceError"
)

func TestSoak(t *testing.T) {
	t.Parallel()
	s := soakFromEnv(t)
	srv := servers[0] // moto, unless SOAK_SERVER names another
	if name := os.Getenv("SOAK_SERVER"); name != "" {
		i := slices.IndexFunc(servers, func(s server) bool { return s.name == name })
		if i < 0 {
			t.Fatalf("SOAK_SERVER=%q: want moto or dynalite", name)
		}
		srv = servers[i]
	}
	w := newFaultWorld(t, srv, faultproxy.WithSeed(s.seed))
	w.T = t
	plan, keys := soakPlan(s)
	ledger := &leaseLedger{Store: w.store, leases: map[string]int{}, failedWrites: map[string]int{},
		failedOps: map[string]int{}, failedCompletes: map[string]int{}}
	h := idempotency.Wrap(ledger, w.Handler,
		idempotency.WithEventKey("id"),
		idempotency.WithKeyPrefix(faultworld.Prefix),
		idempotency.WithLease(soakLease),
		idempotency.WithLogger(slog.New(w.Logs)))
	r := rand.New(rand.NewPCG(s.seed, 3))
	for i := range keys {
		if r.Float64() < soakDecline {
			w.Fail(fmt.Sprintf("o%d", i), 1)
		}
	}
	w.proxy.Set(soakRules(s.faultRate)...)

	var (
		mu       sync.Mutex
		outcomes = map[string]int{}
		wrong    []string
		charged  = map[string]bool{} // ids whose calls all got the charge
	)
	work := make(chan string)
	var wg sync.WaitGroup
	start := time.Now()
	for range soakWorkers {
		wg.Go(func() {
			for id := range work {
				got, err := w.Invoke(h, id)
				var class string
				switch {
				case err == nil && got == id:
					class = outCharged
				case errors.Is(err, faultworld.ErrCardDeclined):
					class = outDeclined
				case errors.As(err, new(*idempotency.InProgressError)):
					class = outInProgress
				case errors.As(err, new(*idempotency.PersistenceError)):
					class = outPersist
				}
				mu.Lock()
				if class == "" {
					wrong = append(wrong, fmt.Sprintf("%s: got (%q, %v)", id, got, err))
				}
				outcomes[class]++
				if _, seen := charged[id]; !seen || class != outCharged {
					charged[id] = class == outCharged
				}
				mu.Unlock()
			}
		})
	}
	for _, id := range plan {
		work <- id
	}
	close(work)
	wg.Wait()
	elapsed := time.Since(start)
	w.proxy.Set()
	counts := w.proxy.Counts()
	if len(wrong) > 0 {
		t.Errorf("%d calls got neither the charge, a typed error nor the handler's error; first: %s", len(wrong), wrong[0])
	}

	// Every lease has ended by now plus the lease: whatever is still
	// IN_PROGRESS was left by a write the library was told had failed.
	time.Sleep(soakLease + 100*time.Millisecond)
	stuck, _ := w.scanStatus(t, srv)
	for _, key := range stuck {
		if ledger.failedWrites[key] == 0 {
			t.Errorf("record %s is IN_PROGRESS after its lease, though every write for it succeeded", key)
		}
	}

	// Settle, as callers retrying after the lease would: the keys whose
	// calls did not all get the charge, or whose writes failed, are
	// invoked again until they answer it. Then every key has a COMPLETED
	// record and none is IN_PROGRESS.
	var unsettled []string
	for i := range keys {
		id := fmt.Sprintf("o%d", i)
		if !charged[id] || ledger.failedWrites[faultworld.Key(id)] > 0 {
			unsettled = append(unsettled, id)
		}
	}
	w.settle(t, h, unsettled)
	left, complete := w.scanStatus(t, srv)
	if len(left) > 0 {
		t.Errorf("%d records IN_PROGRESS after the retries, e.g. %s", len(left), left[0])
	}
	if complete != keys {
		t.Errorf("%d COMPLETED records after the retries, want one per key, %d", complete, keys)
	}

	extra, effectsTotal, leasesTotal := 0, 0, 0
	for i := range keys {
		id := fmt.Sprintf("o%d", i)
		key := faultworld.Key(id)
		effects, leases, failed := w.Effects(id), ledger.leases[key], ledger.failedCompletes[key]
		if effects > leases {
			t.Errorf("order %s charged %d times under %d leases", id, effects, leases)
		}
		// A second charge is allowed only after a completion the library
		// could not make: the response was never stored.
		if effects > 1+failed {
			t.Errorf("order %s charged %d times with %d failed completions", id, effects, failed)
		}
		extra += effects - 1
		effectsTotal += effects
		leasesTotal += leases
	}
	t.Logf("soak: %d invocations (%d keys, %d workers, fault rate %.3f, seed %d) in %v",
		s.invocations, keys, soakWorkers, s.faultRate, s.seed, elapsed.Round(time.Millisecond))
	t.Logf("outcomes: %v", outcomes)
	t.Logf("requests: %v (total %d)", counts.Requests, counts.Total())
	for _, f := range faultproxy.HTTPFaults {
		t.Logf("injected %-30v %d", f, counts.InjectedFault(f))
	}
	t.Logf("leases taken: %d (of which %d found the invocation's own record after a lost reply); charges: %d for %d keys",
		leasesTotal, ledger.ownFound, effectsTotal, keys)
	t.Logf("writes failed beyond the SDK's retries: %v; IN_PROGRESS after the lease, before retries: %d (every one after a failed write); keys retried: %d; extra charges: %d; errors logged: %v",
		ledger.failedOps, len(stuck), len(unsettled), extra, errorMessages(w.Logs))
}

// errorMessages counts the ERROR records of log by message.
func errorMessages(log *fake.Log) map[string]int {
	n := map[string]int{}
	for _, e := range log.At(slog.LevelError) {
		n[e.Message]++
	}
	return n
}

// settle invokes each id until it answers the charge.
func (w *faultWorld) settle(t *testing.T, h *idempotency.Handler, unsettled []string) {
	ids := make(chan string)
	var wg sync.WaitGroup
	for range soakWorkers {
		wg.Go(func() {
			for id := range ids {
				got, err := w.Invoke(h, id)
				if errors.Is(err, faultworld.ErrCardDeclined) {
					got, err = w.Invoke(h, id)
				}
				if err != nil || got != id {
					t.Errorf("settling %s: got (%q, %v)", id, got, err)
				}
			}
		})
	}
	for _, id := range unsettled {
		ids <- id
	}
	close(ids)
	wg.Wait()
}

// scanStatus reads the store's table directly from the server and returns
// the keys of the IN_PROGRESS records and the number of COMPLETED ones.
func (w *faultWorld) scanStatus(t *testing.T, srv server) (inProgress []string, complete int) {
	t.Helper()
	client := srv.client(t)
	var start map[string]types.AttributeValue
	for {
		out, err := client.Scan(context.Background(), &dynamodb.ScanInput{
			TableName:         aws.String(w.store.opts.TableName),
			ExclusiveStartKey: start,
			ConsistentRead:    aws.Bool(true),
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range out.Items {
			status, _ := item[w.store.opts.StatusAttr].(*types.AttributeValueMemberS)
			switch {
			case status == nil:
			case status.Value == string(idempotency.StatusComplete):
				complete++
			case status.Value == string(idempotency.StatusInProgress):
				id, _ := item[w.store.opts.KeyAttr].(*types.AttributeValueMemberS)
				if id != nil {
					inProgress = append(inProgress, id.Value)
				}
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		start = out.LastEvaluatedKey
	}
	slices.Sort(inProgress)
	return inProgress, complete
}
