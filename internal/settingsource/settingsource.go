// Package settingsource tells the operator command which option or
// environment variable gave each setting of a wrapper, as the library
// resolves them, so that the command shows an operator the library's own
// answer instead of working it out a second time. The library sets Of
// when it is linked in; nothing else may.
package settingsource

// Of resolves opts, a []idempotency.Option, as a handler (or, with
// function, a function wrapper) built with them would, and returns, by
// option name (WithEventKey, ...), the name of the option or variable
// that gave each setting that something gave. A setting given by nothing
// has its built-in default and no entry.
var Of func(opts any, function bool) (map[string]string, error)

// Parse returns the idempotency.Option (as any) that value gives the
// option named option, value spelled as the option's environment variable
// spells it (the command reads Metadata.Idempotency's declarations so),
// or the error the library gives that variable's value. The library sets
// it too.
var Parse func(option, value string) (opt any, err error)
