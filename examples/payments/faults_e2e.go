//go:build e2efaults

package main

var injectedFault = func(p Payment) {
	if p.Customer == panicCustomer {
		panic("payments: fault injected for customer " + panicCustomer)
	}
}
