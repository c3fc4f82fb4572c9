package handler

import (
	"context"
	"errors"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Lookup reads the record of key, or returns nil when there is none.
type Lookup func(ctx context.Context, key string) (*idempotency.Record, error)

// Delivery is what one delivery of an event meets, as the library's
// engine answers it: the wrapper is the function's, its store answers with
// the record that the Lookup found, and nothing is run or written. It is
// the only place the command decides what a delivery meets.
type Delivery struct {
	// Key and PayloadHash are the event's, as the engine computed them;
	// Key is "" when the event has none (or it was refused first).
	Key, PayloadHash string
	// Record is the record of Key that the Lookup found, live or not; nil
	// when there is none.
	Record *idempotency.Record
	// Runs reports that the delivery runs the handler: no live record
	// holds the key, the event has no key (Outcome no_key), or
	// idempotency is off (no Outcome).
	Runs bool
	// Outcome is what the wrapper's observer is told
	// (idempotency.WithObserver); "" when idempotency is off.
	Outcome idempotency.Outcome
	// Err is the error that the delivery gets: nil when it gets the
	// stored response, or runs the handler.
	Err error
}

// Deliver returns what a delivery of event meets when the store holds the
// record that lookup returns for its key. Its error is lookup's.
func (w *Wrapper) Deliver(ctx context.Context, event []byte, lookup Lookup) (*Delivery, error) {
	p := &probe{lookup: lookup}
	ctx = context.WithValue(ctx, probeKey{}, p)
	d := &Delivery{}
	if w.keyOf != nil {
		// Also when idempotency is off, and the store is never asked.
		d.Key, d.PayloadHash, _ = w.keyOf(event)
	}
	err := w.deliver(ctx, event)
	if p.err != nil {
		return nil, p.err
	}
	d.Outcome = p.outcome
	if errors.Is(err, errRuns) {
		d.Runs = true
	} else {
		d.Err = err
	}
	switch {
	case p.asked:
		d.Key, d.PayloadHash, d.Record = p.key, p.hash, p.record
	case d.Key != "":
		if d.Record, err = lookup(ctx, d.Key); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Meet returns what a delivery of the request whose record is rec (nil
// for none) meets, for a wrapper of Records: the key is the record's, and
// the payload is not checked, which takes the event.
func (w *Wrapper) Meet(ctx context.Context, rec *idempotency.Record) (*Delivery, error) {
	d, err := w.Deliver(ctx, byKey, func(context.Context, string) (*idempotency.Record, error) { return rec, nil })
	if err != nil {
		return nil, err
	}
	d.Key, d.PayloadHash = "", ""
	if rec != nil {
		d.Key = rec.Key
	}
	return d, nil
}

// byKey is the event of Meet: any that has a key (an empty object has
// none).
var byKey = []byte(`{"record":true}`)

// errRuns is what the probe's handler returns: a delivery reached it.
var errRuns = errors.New("the handler runs")

// probe is what one delivery asked the store and told the observer.
type probe struct {
	lookup    Lookup
	asked     bool
	key, hash string
	record    *idempotency.Record
	err       error // lookup's
	outcome   idempotency.Outcome
}

type probeKey struct{}

func probeOf(ctx context.Context) *probe {
	p, _ := ctx.Value(probeKey{}).(*probe)
	return p
}

// observe is the wrappers' observer.
func observe(ctx context.Context, o idempotency.Observation) {
	if p := probeOf(ctx); p != nil {
		p.outcome = o.Outcome
	}
}

// store is the Store the wrappers are built over: it reads through the
// Lookup of the delivery in the context, and never writes. Its Acquire
// answers as a store holding that record would: with the record when it
// is live, else by writing (here: as if).
type store struct{}

func (store) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	p := probeOf(ctx)
	p.asked, p.key, p.hash = true, rec.Key, rec.PayloadHash
	existing, err := p.lookup(ctx, rec.Key)
	if err != nil {
		p.err = err
		return nil, err
	}
	p.record = existing
	if existing == nil || !existing.Live(now) {
		return nil, nil
	}
	cp := *existing
	return &cp, nil
}

func (store) Complete(context.Context, *idempotency.Record) error { return nil }

func (store) Release(context.Context, string, string) error { return nil }

func (store) Reclaim(context.Context, *idempotency.Record, string) error { return nil }

func (store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	rec, err := probeOf(ctx).lookup(ctx, key)
	if err == nil && rec == nil {
		err = idempotency.ErrRecordNotFound
	}
	return rec, err
}
