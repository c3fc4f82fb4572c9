package sim

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// This file is the cooperative scheduler: one goroutine runs at a time,
// and simulated time moves only between steps.
//
// Each invocation runs the real engine in a goroutine of its own (a task).
// Whenever it reaches the world (a store request, the handler's effect, a
// wait), it hands control back to the scheduler, which then runs the
// earliest pending event: a task's next step, a request arriving at a
// server, a platform's redelivery, a crash. Events at the same instant run
// in an order drawn from the seeded source. So the interleaving is a
// function of the seed, and replaying a seed replays the schedule.

// crash is the value with which a task of a process that has died
// unwinds: every step it tries after the death panics with it, so that
// the engine's deferred code, which would release the key, does nothing,
// as nothing runs in a killed process.
type crash struct{}

// event is something that happens at a simulated instant.
type event struct {
	at  time.Time
	tie uint64 // random: the order of events at one instant
	fn  func()
}

type events []*event

func (q events) Len() int { return len(q) }
func (q events) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].tie < q[j].tie
}
func (q events) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *events) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *events) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// scheduler runs events in time order, and tasks one at a time.
type scheduler struct {
	now   time.Time
	queue events
	rng   *rand.Rand
	// yield is how the running task hands control back.
	yield   chan struct{}
	current *task
	live    int // tasks started and not finished
	// failure is a panic of a task other than a crash: a bug of the
	// engine or of the simulator, reported with the seed.
	failure any
}

func newScheduler(start time.Time, rng *rand.Rand) *scheduler {
	return &scheduler{now: start, rng: rng, yield: make(chan struct{})}
}

// at runs fn at t (now, if t has passed).
func (s *scheduler) at(t time.Time, fn func()) {
	if t.Before(s.now) {
		t = s.now
	}
	heap.Push(&s.queue, &event{at: t, tie: s.rng.Uint64(), fn: fn})
}

// after runs fn d from now.
func (s *scheduler) after(d time.Duration, fn func()) { s.at(s.now.Add(d), fn) }

// run runs events until none is left, or a task fails.
func (s *scheduler) run() {
	for s.queue.Len() > 0 && s.failure == nil {
		e := heap.Pop(&s.queue).(*event)
		s.now = e.at
		e.fn()
	}
	if s.failure == nil && s.live != 0 {
		s.failure = fmt.Sprintf("simulator: %d tasks still blocked with no event left to wake them", s.live)
	}
}

// process is a sandbox's process: it dies at a crash or at its
// invocation's deadline, and everything it was doing stops there.
type process struct {
	dead bool
	task *task // the invocation it runs, if any
}

// task is one goroutine the scheduler runs: an invocation.
type task struct {
	s    *scheduler
	proc *process
	wake chan struct{}
	done bool
}

// spawn starts fn as a task of p, now.
func (s *scheduler) spawn(p *process, fn func(t *task)) *task {
	t := &task{s: s, proc: p, wake: make(chan struct{})}
	p.task = t
	s.live++
	runner := workers.get()
	runner <- func() {
		<-t.wake
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(crash); !ok {
					s.failure = fmt.Sprintf("panic in an invocation: %v", r)
				}
			}
			t.done = true
			s.live--
			workers.put(runner)
			s.yield <- struct{}{}
		}()
		fn(t)
	}
	s.at(s.now, func() { s.resume(t) })
	return t
}

// workers are goroutines kept for the next tasks: a task's goroutine
// grows its stack running the engine, and a new goroutine would grow it
// again (that was an eighth of a schedule's time).
var workers = &workerPool{}

type workerPool struct {
	mu   sync.Mutex
	idle []chan func()
}

func (p *workerPool) get() chan func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle = p.idle[:n-1]
		return w
	}
	w := make(chan func())
	go func() {
		for fn := range w {
			fn()
		}
	}()
	return w
}

func (p *workerPool) put(w chan func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) < 64 {
		p.idle = append(p.idle, w)
		return
	}
	close(w)
}

// resume runs t until it blocks or ends. Only the scheduler's goroutine,
// in an event, resumes a task.
func (s *scheduler) resume(t *task) {
	if t.done {
		return
	}
	prev := s.current
	s.current = t
	t.wake <- struct{}{}
	<-s.yield
	s.current = prev
}

// kill ends p: its task, blocked, is resumed to unwind. Called from an
// event, or by p's own task (which then panics itself).
func (s *scheduler) kill(p *process) {
	if p.dead {
		return
	}
	p.dead = true
	if t := p.task; t != nil && !t.done && t != s.current {
		s.resume(t)
	}
}

// alive panics with crash when t's process has died.
func (t *task) alive() {
	if t.proc.dead {
		panic(crash{})
	}
}

// block hands control to the scheduler until an event resumes t.
func (t *task) block() {
	t.s.yield <- struct{}{}
	<-t.wake
	t.alive()
}

// sleep blocks t for d of simulated time.
func (t *task) sleep(d time.Duration) {
	t.alive()
	t.s.after(d, func() { t.s.resume(t) })
	t.block()
}

// request sends a request from t to a server, which applies it there
// after the request's travel and answers back later: apply runs as an
// event of its own, so a request on its way is applied even when t's
// process dies before the answer comes, as on a real network.
func (t *task) request(there, back time.Duration, apply func()) {
	t.alive()
	t.s.after(there, apply)
	t.sleep(there + max(back, time.Microsecond))
}
