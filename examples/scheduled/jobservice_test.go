package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// jobService is the tests' job service (see JobClient): POST /runs makes a
// run of a job and answers with it, GET /runs/{key} finds the run made
// under key. It keeps every run it makes, repeats of a key included: the
// effects the tests count. It tells when two runs of one job overlap, can
// hold runs until let go, and can kill the function at a point of a run.
// It is safe for concurrent use.
type jobService struct {
	mux     *http.ServeMux
	arrived chan string // the key of each run request, as it arrives

	mu      sync.Mutex
	runs    []Run
	keys    []string       // the Idempotency-Key of each run
	finds   int            // GET /runs/{key} requests
	running map[string]int // job -> run requests being served
	overlap bool           // two run requests of one job were served at once
	hold    chan struct{}  // while set, runs wait for it to close
	crashAt crashPoint     // the next run's
	kill    func()         // what a crash point calls
}

// crashPoint is where in a run the service kills the function.
type crashPoint int

const (
	noCrash crashPoint = iota
	// crashBeforeRun: on the request's arrival. The run is not made.
	crashBeforeRun
	// crashAfterRun: once the run is made, before the function hears of
	// it (the answer is never sent).
	crashAfterRun
)

func newJobService() *jobService {
	s := &jobService{mux: http.NewServeMux(), arrived: make(chan string, 64), running: map[string]int{}}
	s.mux.HandleFunc("POST /runs", s.run)
	s.mux.HandleFunc("GET /runs/{key}", s.find)
	return s
}

func (s *jobService) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Hold makes runs wait, unmade and unanswered, until release is called
// (or their caller goes away, which leaves them unmade).
func (s *jobService) Hold() (release func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.hold = ch
	s.mu.Unlock()
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

// CrashNext makes the next run call kill at point p.
func (s *jobService) CrashNext(p crashPoint, kill func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.crashAt, s.kill = p, kill
}

func (s *jobService) run(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	var req Run
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || key == "" || req.Job == "" {
		http.Error(w, `{"error":"a run needs a job and an Idempotency-Key"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.running[req.Job]++
	if s.running[req.Job] > 1 {
		s.overlap = true
	}
	hold, crash, kill := s.hold, s.crashAt, s.kill
	s.crashAt = noCrash
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.running[req.Job]--
		s.mu.Unlock()
	}()
	select {
	case s.arrived <- key:
	default:
	}

	if crash == crashBeforeRun {
		kill()
		// The caller's connection closes with its process.
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		return
	}
	if hold != nil {
		select {
		case <-hold:
		case <-r.Context().Done():
			return // the caller went away: no run
		}
	}
	s.mu.Lock()
	req.ID = fmt.Sprintf("run_%04d", len(s.runs)+1)
	s.runs = append(s.runs, req)
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	if crash == crashAfterRun {
		kill()
		panic(http.ErrAbortHandler) // no answer: the connection is dropped
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(req)
}

func (s *jobService) find(w http.ResponseWriter, r *http.Request) {
	key := r.PathValue("key")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.finds++
	for i, k := range s.keys {
		if k == key {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(s.runs[i])
			return
		}
	}
	http.Error(w, `{"error":"no run under this key"}`, http.StatusNotFound)
}

// Runs returns the runs made, in order, repeats included.
func (s *jobService) Runs() []Run {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Run(nil), s.runs...)
}

// RunsOf returns how many runs were made of the tick at.
func (s *jobService) RunsOf(at time.Time) int {
	n := 0
	for _, r := range s.Runs() {
		if r.Tick.Equal(at) {
			n++
		}
	}
	return n
}

// Finds returns how many times a run was looked up.
func (s *jobService) Finds() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finds
}

// Overlapped reports whether two runs of one job were ever served at once.
func (s *jobService) Overlapped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.overlap
}
