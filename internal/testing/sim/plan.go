package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is the plan of a schedule, drawn from its seed: the function's
// settings, the requests that arrive and how, and the world's own events
// (a Redis failover, a Region's outage). Everything else (latencies,
// faults, crashes) is drawn while the schedule runs, from sources seeded by
// the seed and the invocation, so that removing a request from a plan (to
// shrink a failing schedule) leaves the other invocations as they were.

// Store names the store a schedule runs on.
type Store string

// The stores the simulator models.
const (
	// StoreDynamo is one DynamoDB table, in one Region, behind the real
	// dynamo.Store.
	StoreDynamo Store = "dynamo"
	// StoreRedis is a Redis or Valkey primary with a replica, modelled at
	// the idempotency.Store level with redis's scripts' semantics.
	StoreRedis Store = "redis"
	// StoreGlobalEventual is a DynamoDB global table in multi-Region
	// eventual consistency (MREC), with two Regions active.
	StoreGlobalEventual Store = "global-eventual"
	// StoreGlobalStrong is a DynamoDB global table in multi-Region strong
	// consistency (MRSC), with two Regions active.
	StoreGlobalStrong Store = "global-strong"
)

// Stores are the stores, in the order the command runs them for -store all.
var Stores = []Store{StoreDynamo, StoreRedis, StoreGlobalEventual, StoreGlobalStrong}

// source is how a request reaches the function.
type source int

const (
	sourceSQS   source = iota // a queue: redelivered after the visibility timeout
	sourceAPI                 // an API Gateway client: retries on errors and its own timeout
	sourceAsync               // Lambda's asynchronous invocation: two retries, a minute and two apart
)

func (s source) String() string { return [...]string{"sqs", "api", "async"}[s] }

// config is the function and the world of one schedule.
type config struct {
	store       Store
	regions     int
	timeout     time.Duration // the function's timeout: each invocation's deadline
	expiry      time.Duration // WithExpiresAfter
	policy      idempotency.AbandonPolicy
	reconcile   bool // WithReconcile, asking the downstream by the key
	uncertain   bool // the handler reports an external call without answer as Uncertain
	wait        bool // WithWaitForInProgress
	leaseBeyond time.Duration
	validation  bool // WithPayloadValidation on the amount
	cache       int  // WithLocalCache
	invoker     bool // the effect is a DynamoDB write staged with the record
	maxSkew     time.Duration
	// redisWait is redis's WaitReplicas: WAIT for that many replicas
	// after each write (0: today's default, no WAIT).
	redisWait int
	// responseStore wraps the store in responsestore's, compressing and
	// encrypting each response (WithCompression, WithAEAD).
	responseStore bool

	// Per attempt of a store request.
	throttle, serverError, replyLost, slowReply float64
	// Per invocation.
	crash, handlerError, slowHandler, externalTimeout, largeResponse float64

	visibility     time.Duration // SQS
	maxReceives    int           // SQS
	clientTimeout  time.Duration // API client
	clientAttempts int           // API client
	duplicate      float64       // at-least-once: another delivery of the same message
}

// request is one request of the plan: an order, sent once by its source,
// then delivered again as that source's rules say.
type request struct {
	id     int
	at     time.Duration // after the start
	source source
	order  int // the idempotency key is the order
	amount int // the validated part of the payload
	region int
}

// outage is a world event of the plan: a Redis primary failing over at
// `at`, or a Region unreachable from at for length.
type outage struct {
	at     time.Duration
	length time.Duration
	region int // Region outages only
}

// plan is one schedule.
type plan struct {
	seed     uint64
	cfg      config
	requests []request
	outages  []outage
	// quiet invocations get no fault and no crash: what shrinking turns
	// off, one invocation at a time.
	quiet map[invocationID]bool
}

// invocationID names an invocation by its request and its delivery: it
// stays the same when other requests are removed from the plan.
type invocationID struct {
	request, delivery int
}

func (id invocationID) String() string {
	if id.request >= probeRequest {
		return fmt.Sprintf("probe-o%d", id.request-probeRequest)
	}
	return fmt.Sprintf("r%d.%d", id.request, id.delivery)
}

// probeRequest is the request id of the final probes (see world.probe).
const probeRequest = 1 << 20

// options change how plans are drawn, for the command's flags and the
// tests.
type options struct {
	redisWait   int  // -1: drawn per seed
	leaseBeyond bool // WithLeaseBeyondDeadline at least the largest skew
}

// newPlan draws the plan of seed on store.
func newPlan(seed uint64, store Store, o options) *plan {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	p := &plan{seed: seed, quiet: map[invocationID]bool{}}
	c := &p.cfg
	c.store = store
	c.regions = 1
	if store == StoreGlobalEventual || store == StoreGlobalStrong {
		c.regions = 2
	}
	c.timeout = pick(r, 3*time.Second, 6*time.Second, 15*time.Second)
	c.expiry = pick(r, 10*time.Second, time.Minute, 10*time.Minute, time.Hour)
	switch x := r.Float64(); {
	case x < 0.7:
		c.policy = idempotency.AbandonRetry
	case x < 0.85:
		c.policy = idempotency.AbandonBlock
	default:
		c.policy = idempotency.AbandonUncertain
	}
	c.uncertain = r.Float64() < 0.25
	c.reconcile = (c.uncertain || c.policy == idempotency.AbandonUncertain) && r.Float64() < 0.8
	c.wait = r.Float64() < 0.3
	if r.Float64() < 0.3 {
		c.leaseBeyond = time.Duration(r.IntN(5000)) * time.Millisecond
	}
	c.validation = r.Float64() < 0.9
	if r.Float64() < 0.25 {
		c.cache = 16
	}
	c.invoker = store != StoreRedis && r.Float64() < 0.3
	if r.Float64() < 0.5 {
		c.maxSkew = time.Duration(1+r.IntN(3000)) * time.Millisecond
	}
	if store == StoreRedis {
		c.redisWait = r.IntN(2)
		if o.redisWait >= 0 {
			c.redisWait = o.redisWait
		}
	}
	if o.leaseBeyond {
		c.leaseBeyond = max(c.leaseBeyond, c.maxSkew)
	}
	// Drawn from a source of its own, so that the draws above and below
	// name the schedules they named before it.
	c.responseStore = rand.New(rand.NewPCG(seed, 0x7e5)).Float64() < 0.3

	switch x := r.Float64(); {
	case x < 0.4:
		c.throttle, c.serverError, c.replyLost, c.slowReply, c.crash = 0.01, 0.01, 0.01, 0.01, 0.05
	case x < 0.8:
		c.throttle, c.serverError, c.replyLost, c.slowReply, c.crash = 0.03, 0.03, 0.04, 0.02, 0.1
	default:
		c.throttle, c.serverError, c.replyLost, c.slowReply, c.crash = 0.12, 0.08, 0.12, 0.05, 0.2
	}
	c.handlerError, c.slowHandler = 0.05, 0.03
	if c.uncertain {
		c.externalTimeout = 0.08
	}
	if r.Float64() < 0.02 {
		c.largeResponse = 0.3
	}
	c.visibility = pick(r, c.timeout, 6*c.timeout) // under the advised six times, duplicates overlap
	c.maxReceives = 3
	c.clientTimeout = pick(r, time.Second, 5*time.Second, 29*time.Second)
	c.clientAttempts = 2 + r.IntN(3)
	c.duplicate = pick(r, 0.0, 0.05, 0.2)

	orders := 1 + r.IntN(4)
	amounts := make([]int, orders)
	for i := range amounts {
		amounts[i] = 100 * (1 + r.IntN(9))
	}
	n := 2 + r.IntN(9)
	src := source(r.IntN(3))
	for i := range n {
		order := r.IntN(orders)
		q := request{id: i, source: src, order: order, amount: amounts[order], region: r.IntN(c.regions)}
		if r.Float64() < 0.2 {
			q.source = source(r.IntN(3))
		}
		if r.Float64() < 0.1 {
			q.amount += 1 + r.IntN(50) // a client reusing the key for another request
		}
		switch r.IntN(3) {
		case 0: // a burst
			q.at = time.Duration(r.IntN(500)) * time.Millisecond
		case 1: // around the first invocations' deadlines
			q.at = c.timeout + time.Duration(r.IntN(4000)-2000)*time.Millisecond
		default:
			q.at = time.Duration(r.IntN(120)) * time.Second
		}
		q.at = max(q.at, 0)
		p.requests = append(p.requests, q)
	}
	slices.SortStableFunc(p.requests, func(a, b request) int { return int(a.at - b.at) })

	switch store {
	case StoreRedis:
		for range r.IntN(3) {
			p.outages = append(p.outages, outage{at: time.Duration(r.IntN(30000)) * time.Millisecond})
		}
	case StoreGlobalEventual, StoreGlobalStrong:
		for range r.IntN(2) {
			p.outages = append(p.outages, outage{
				at:     time.Duration(r.IntN(30000)) * time.Millisecond,
				length: time.Duration(1+r.IntN(60)) * time.Second,
				region: r.IntN(c.regions),
			})
		}
	}
	return p
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// String describes the plan in a few lines, for a failing schedule's
// report.
func (p *plan) String() string {
	var b strings.Builder
	c := &p.cfg
	fmt.Fprintf(&b, "store %s, timeout %v, expiry %v, policy %v, reconcile %v, uncertain %v, wait %v, lease beyond %v, validation %v, cache %d, staged writes %v, response store %v, max skew %v",
		c.store, c.timeout, c.expiry, c.policy, c.reconcile, c.uncertain, c.wait, c.leaseBeyond, c.validation, c.cache, c.invoker, c.responseStore, c.maxSkew)
	if c.store == StoreRedis {
		fmt.Fprintf(&b, ", WAIT %d", c.redisWait)
	}
	fmt.Fprintf(&b, "\nfaults per request: throttle %.2f, 5xx %.2f, reply lost %.2f, slow %.2f; per invocation: crash %.2f\n", c.throttle, c.serverError, c.replyLost, c.slowReply, c.crash)
	for _, q := range p.requests {
		fmt.Fprintf(&b, "  r%d at %v: %s, order %d, amount %d, region %d\n", q.id, q.at, q.source, q.order, q.amount, q.region)
	}
	for _, o := range p.outages {
		if c.store == StoreRedis {
			fmt.Fprintf(&b, "  failover at %v\n", o.at)
		} else {
			fmt.Fprintf(&b, "  Region %d out at %v for %v\n", o.region, o.at, o.length)
		}
	}
	if len(p.quiet) > 0 {
		var q []string
		for id := range p.quiet {
			q = append(q, id.String())
		}
		slices.Sort(q)
		fmt.Fprintf(&b, "  without faults or crashes: %s\n", strings.Join(q, " "))
	}
	return b.String()
}
