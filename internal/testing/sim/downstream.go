package sim

import (
	"errors"
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// This file is the handler's downstream: the service its effect goes to,
// which counts the effects made for each key.

// downstream is the service the handler's effect goes to (a payment
// provider): it records each effect with the key the handler passes on,
// and answers a reconcile function's question by that key.
type downstream struct {
	w       *world
	effects map[string][]downEffect // by idempotency key
	last    int
}

type downEffect struct {
	n      int
	amount int
	order  string
}

func (d *downstream) next() int { d.last++; return d.last }

var errNoAnswer = errors.New("sim: the downstream did not answer in time")

// effect makes the effect for key. Its request may be applied and its
// answer lost (an Uncertain outcome, when the function says so).
func (d *downstream) effect(inv *invocation, key string, amount int) (int, error) {
	w := d.w
	if !inv.quiet && inv.rng.Float64() < w.cfg.slowHandler {
		// Long enough to outlive the deadline: Lambda ends it midway.
		w.injectHandler(inv, "the handler outlives the timeout")
		inv.task.sleep(w.cfg.timeout)
	}
	lost := !inv.quiet && inv.rng.Float64() < w.cfg.externalTimeout
	n := 0
	w.call(inv, latency(inv.rng, 5, 50), latency(inv.rng, 5, 50), func() {
		n = d.next()
		d.effects[key] = append(d.effects[key], downEffect{n: n, amount: amount, order: fmt.Sprintf("o%d", inv.req.order)})
		inv.effects = append(inv.effects, n)
		if w.trace != nil {
			w.trace.log(inv, "EFFECT %d for %s (amount %d)", n, short(key), amount)
		}
		w.check.effect(inv, key, n, amount)
	})
	if lost {
		w.injectHandler(inv, "the downstream's answer is lost")
		if w.trace != nil {
			w.trace.log(inv, "the downstream's answer is lost")
		}
		return 0, idempotency.Uncertain(errNoAnswer)
	}
	return n, nil
}

// lookup is the reconcile function's question: did the effect for key
// happen, and with what receipt?
func (d *downstream) lookup(inv *invocation, key string) (receipt, bool, error) {
	var found []downEffect
	d.w.call(inv, latency(inv.rng, 5, 50), latency(inv.rng, 5, 50), func() { found = d.effects[key] })
	if !inv.quiet && inv.rng.Float64() < d.w.cfg.externalTimeout {
		d.w.injectHandler(inv, "the downstream does not answer the reconcile function")
		return receipt{}, false, errNoAnswer
	}
	if len(found) == 0 {
		if d.w.trace != nil {
			d.w.trace.log(inv, "reconcile: no effect for %s", short(key))
		}
		return receipt{}, false, nil
	}
	e := found[len(found)-1]
	inv.reconciled = e.n
	inv.produced = encode(receipt{OrderID: e.order, Amount: e.amount, Effect: e.n})
	d.w.check.reconciledOther(inv, e.n, e.amount)
	if d.w.trace != nil {
		d.w.trace.log(inv, "reconcile: effect %d happened", e.n)
	}
	return receipt{OrderID: e.order, Amount: e.amount, Effect: e.n}, true, nil
}

// latency draws a duration between lo and hi milliseconds.
