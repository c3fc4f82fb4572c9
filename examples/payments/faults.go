package main

// The end-to-end tests check that a panic in the handler releases the
// idempotency record. They build the function with the e2efaults tag, in
// which a payment by panicCustomer panics just before the charge
// (injectedFault); a normal build has no such customer.
const panicCustomer = "cus_panic"
