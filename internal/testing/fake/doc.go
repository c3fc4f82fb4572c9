// Package fake holds the test doubles that the tests of several packages
// share: a clock that a test moves by hand ([Clock]), and a log that keeps
// what was logged for a test to read ([Log]).
package fake
