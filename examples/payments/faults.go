package main

// The end-to-end tests check that a panic in the handler releases the
// idempotency record. They build the function with the e2efaults tag, in
// which a payment by panicCustomer panics just before the charge
// (faults_e2e.go); a normal build has no such customer (faults_off.go).
const panicCustomer = "cus_panic"
