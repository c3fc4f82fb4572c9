package handler

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// Lookup reads the record of key, or returns nil when there is none. A
// record that cannot be read is an *idempotency.CorruptedRecordError, as
// a Store's Get returns it: the function meets it too, and the delivery
// says so.
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
	// when there is none, or when it cannot be read (Corrupted).
	Record *idempotency.Record
	// Corrupted is the store's *idempotency.CorruptedRecordError for a
	// record of Key that cannot be read.
	Corrupted error
	// Runs reports that the delivery runs the handler: no live record
	// holds the key, the event has no key (Outcome no_key), or
	// idempotency is off (no Outcome).
	Runs bool
	// Outcome is what the wrapper's observer is told
	// (idempotency.WithObserver): when the handler runs, the outcome of
	// its success (new, or no_key); "" when idempotency is off.
	Outcome idempotency.Outcome
	// Err is the error that the delivery gets: nil when it gets the
	// stored response, or runs the handler.
	Err error
	// Undecodable is what the delivery meets instead when the event does
	// not decode into the handler's input type, which the command cannot
	// see: set when that would change the answer (the handler runs
	// otherwise), for a handler; a function wrapper's argument is decoded
	// by the function's own code.
	Undecodable *Delivery
	// Then is what a delivery meets once the invocation that holds the
	// key has ended, when Err is an *idempotency.InProgressError: at its
	// LeaseEnd and idempotency.AbandonGrace after (Then.At).
	Then *Delivery
	// At is when Then is met; zero for a delivery now.
	At time.Time
}

// Deliver returns what a delivery of event meets when the store holds the
// record that lookup returns for its key. Its error is lookup's, but for a
// record that cannot be read.
func (w *Wrapper) Deliver(ctx context.Context, event []byte, lookup Lookup) (*Delivery, error) {
	d, err := w.deliver(ctx, w.built, event, lookup)
	if err != nil {
		return nil, err
	}
	if d.Runs && w.undecodable != nil {
		u, err := w.deliver(ctx, *w.undecodable, event, lookup)
		if err != nil {
			return nil, err
		}
		if !u.Runs {
			d.Undecodable = u
		}
	}
	if e, ok := errors.AsType[*idempotency.InProgressError](d.Err); ok && !e.LeaseEnd.IsZero() {
		// Asked again, at a time past the holder's end: the engine
		// decides what comes after, by the key's abandon policy.
		at := e.LeaseEnd.Add(idempotency.AbandonGrace)
		w.at = at
		then, err := w.deliver(ctx, w.built, event, lookup)
		w.at = time.Time{}
		if err != nil {
			return nil, err
		}
		then.At = at
		d.Then = then
	}
	return d, nil
}

// deliver is one delivery of event to b, at the wrapper's clock.
func (w *Wrapper) deliver(ctx context.Context, b built, event []byte, lookup Lookup) (*Delivery, error) {
	p := &probe{lookup: lookup}
	ctx = context.WithValue(ctx, probeKey{}, p)
	d := &Delivery{}
	if b.keyOf != nil {
		// Also when idempotency is off, and the store is never asked.
		d.Key, d.PayloadHash, _ = b.keyOf(event)
	}
	err := b.deliver(ctx, event)
	if p.err != nil {
		return nil, p.err
	}
	d.Outcome, d.Runs = p.outcome, p.reached
	if !p.reached {
		d.Err = err
	}
	switch {
	case p.asked:
		d.Key, d.PayloadHash, d.Record, d.Corrupted = p.key, p.hash, p.record, p.corrupted
	case d.Key != "":
		if d.Record, err = lookup(ctx, d.Key); err != nil {
			if !corrupted(err) {
				return nil, err
			}
			d.Corrupted = err
		}
	}
	return d, nil
}

// Meet returns what a delivery of the request whose record is key's meets,
// for a wrapper of Records: the key is the record's, and the payload is
// not checked, which takes the event.
func (w *Wrapper) Meet(ctx context.Context, key string, lookup Lookup) (*Delivery, error) {
	d, err := w.deliver(ctx, w.built, byKey, func(ctx context.Context, _ string) (*idempotency.Record, error) { return lookup(ctx, key) })
	if err != nil {
		return nil, err
	}
	d.Key, d.PayloadHash = key, ""
	return d, nil
}

// byKey is the event of Meet: any that has a key (an empty object has
// none).
var byKey = []byte(`{"record":true}`)

// probe is what one delivery asked the store and told the observer.
type probe struct {
	lookup    Lookup
	asked     bool
	key, hash string
	record    *idempotency.Record
	corrupted error
	err       error // lookup's
	outcome   idempotency.Outcome
	reached   bool // the handler ran
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

// reach is the probe's handler: it runs nothing, says that a delivery
// reached it, and succeeds, so that the engine answers as it does for a
// handler that succeeds.
func reach(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
	if p := probeOf(ctx); p != nil {
		p.reached = true
	}
	return json.RawMessage("null"), nil
}

// undecodable is an input type that no event but null decodes into
// (encoding/json decodes nothing else into a func): the probe's handler
// of it is reached by no event, as a handler is not by an event that does
// not decode into its type. It has no UnmarshalJSON of its own: the
// middleware would read a key inside it as what that method decodes.
type undecodable func()

func neverReached(context.Context, undecodable) (json.RawMessage, error) {
	return nil, errors.New("reached a handler that no event decodes for")
}

func corrupted(err error) bool {
	_, ok := errors.AsType[*idempotency.CorruptedRecordError](err)
	return ok
}

// store is the Store the wrappers are built over: it reads through the
// Lookup of the delivery in the context, and never writes. Its Acquire
// answers as a store holding that record would: with the record when it
// is live, else by writing (here: as if), and with the
// *idempotency.CorruptedRecordError of a record that cannot be read.
type store struct{}

func (store) Acquire(ctx context.Context, rec *idempotency.Record, now time.Time) (*idempotency.Record, error) {
	p := probeOf(ctx)
	p.asked, p.key, p.hash = true, rec.Key, rec.PayloadHash
	existing, err := p.lookup(ctx, rec.Key)
	if corrupted(err) {
		p.corrupted = err
		return nil, err
	}
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

func (store) MarkUncertain(context.Context, *idempotency.Record) error { return nil }

func (store) Release(context.Context, string, string) error { return nil }

func (store) Reclaim(context.Context, *idempotency.Record, string) error { return nil }

func (store) Get(ctx context.Context, key string) (*idempotency.Record, error) {
	rec, err := probeOf(ctx).lookup(ctx, key)
	if err == nil && rec == nil {
		err = idempotency.ErrRecordNotFound
	}
	return rec, err
}
