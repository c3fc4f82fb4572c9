package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// fakeFulfilment is the fulfilment service for the tests. It answers 429
// to a call beyond limit in flight (0: no limit), fails the calls for the
// order ids in failing with that status, and counts the fulfilments it
// accepted per Idempotency-Key. Each call takes delay, a real service's
// latency, so that calls overlap and the limit is reached under load.
type fakeFulfilment struct {
	limit   int32
	delay   time.Duration
	failing sync.Map // order id -> status code

	inFlight, maxInFlight atomic.Int32
	rejected              atomic.Int32 // 429s

	mu       sync.Mutex
	calls    int
	accepted map[string]int    // Idempotency-Key -> fulfilments
	orderOf  map[string]string // Idempotency-Key -> order id
}

func newFakeFulfilment(limit int32, delay time.Duration) *fakeFulfilment {
	return &fakeFulfilment{limit: limit, delay: delay, accepted: map[string]int{}, orderOf: map[string]string{}}
}

func (f *fakeFulfilment) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for m := f.maxInFlight.Load(); n > m && !f.maxInFlight.CompareAndSwap(m, n); m = f.maxInFlight.Load() {
	}
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	if f.limit > 0 && n > f.limit {
		f.rejected.Add(1)
		http.Error(w, "too many requests in flight", http.StatusTooManyRequests)
		return
	}
	if r.Method != http.MethodPost || r.URL.Path != "/fulfilments" {
		http.NotFound(w, r)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	var o Order
	if err := json.NewDecoder(r.Body).Decode(&o); err != nil || key == "" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	time.Sleep(f.delay)
	if code, ok := f.failing.Load(o.OrderID); ok {
		http.Error(w, "refused", code.(int))
		return
	}
	f.mu.Lock()
	f.accepted[key]++
	f.orderOf[key] = o.OrderID
	id := "f-" + strconv.Itoa(len(f.accepted))
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(Fulfilment{ID: id})
}

// fulfilled returns the accepted fulfilments per order id, and the calls
// received in all.
func (f *fakeFulfilment) fulfilled() (perOrder map[string]int, calls int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	perOrder = map[string]int{}
	for key, n := range f.accepted {
		perOrder[f.orderOf[key]] += n
	}
	return perOrder, f.calls
}
