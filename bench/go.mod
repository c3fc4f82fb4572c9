module github.com/gopowertools/lambda/bench

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/gopowertools/lambda v0.0.0-00010101000000-000000000000
	github.com/jmespath/go-jmespath v0.4.0
)

// The library is measured as it is in this checkout, and only this module,
// never the library, depends on the JMESPath package it is compared with.
replace github.com/gopowertools/lambda => ../
