// Package provider is a local stand-in for a card payment provider, for the
// payments example's demo and end-to-end tests. It serves POST /charges the
// way real providers do: a request that repeats an Idempotency-Key gets the
// charge created the first time instead of a new one. It counts every
// request it receives, so a test can tell whether the function under test
// called it again, and it can be told to fail, hang or slow down.
//
// A Server is safe for concurrent use.
package provider

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// ChargeRequest is the body of POST /charges.
type ChargeRequest struct {
	OrderID  string `json:"order_id"`
	Customer string `json:"customer"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

// Charge is a charge the provider created.
type Charge struct {
	ID             string `json:"id"`
	IdempotencyKey string `json:"-"`
	ChargeRequest
}

// Server is the fake provider's HTTP handler. The zero value is not usable:
// call [New].
type Server struct {
	log *slog.Logger

	mu       sync.Mutex
	keys     []string // Idempotency-Key of each request
	charges  []Charge
	byKey    map[string]int // Idempotency-Key -> index in charges
	failures int            // requests still to fail
	delay    time.Duration
	hold     chan struct{} // while non-nil, requests wait for it to close
	arrived  chan ChargeRequest
}

// New returns a provider that logs each request to log (nil: no logging).
func New(log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{log: log, byKey: map[string]int{}, arrived: make(chan ChargeRequest, 64)}
}

// FailNext makes the next n requests fail with 503 before charging.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = n
}

// SetDelay makes each request wait d before it is answered.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Hold makes requests wait, unanswered, until the returned function is
// called (or the client gives up). The charge is created when the request
// is let go, as a provider that is slow to answer would.
func (s *Server) Hold() (release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.hold = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.hold == ch {
				s.hold = nil
			}
			s.mu.Unlock()
			close(ch)
		})
	}
}

// Arrived delivers each request as it comes in, before it is held, delayed
// or answered, so a test can act while a request is in flight. It buffers
// 64 requests; later ones are not delivered while the buffer is full.
func (s *Server) Arrived() <-chan ChargeRequest { return s.arrived }

// Requests returns how many charge requests arrived, counting retries and
// requests that failed.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// Charges returns the charges created, in order. A request that repeats an
// Idempotency-Key does not create one.
func (s *Server) Charges() []Charge {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Charge(nil), s.charges...)
}

// Keys returns the Idempotency-Key of each request, in order of arrival.
func (s *Server) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.keys...)
}

// ServeHTTP answers POST /charges.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/charges" || r.Method != http.MethodPost {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	var req ChargeRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil || key == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "a JSON body and an Idempotency-Key header are required"})
		return
	}

	s.mu.Lock()
	s.keys = append(s.keys, key)
	fail := s.failures > 0
	if fail {
		s.failures--
	}
	delay, hold := s.delay, s.hold
	s.mu.Unlock()
	select {
	case s.arrived <- req:
	default:
	}

	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
		}
	}
	if fail {
		s.log.Info("charge failed on purpose", "order_id", req.OrderID, "idempotency_key", key)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "provider unavailable"})
		return
	}
	c, replayed := s.charge(key, req)
	s.log.Info("charge", "id", c.ID, "order_id", c.OrderID, "amount", c.Amount, "currency", c.Currency,
		"idempotency_key", key, "replayed", replayed)
	writeJSON(w, http.StatusOK, map[string]string{"id": c.ID})
}

// charge creates a charge, or returns the one created under key before.
func (s *Server) charge(key string, req ChargeRequest) (c Charge, replayed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.byKey[key]; ok {
		return s.charges[i], true
	}
	c = Charge{ID: fmt.Sprintf("ch_%04d", len(s.charges)+1), IdempotencyKey: key, ChargeRequest: req}
	s.byKey[key] = len(s.charges)
	s.charges = append(s.charges, c)
	return c, false
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
