//go:build !e2efaults

package main

var injectedFault func(Payment)
