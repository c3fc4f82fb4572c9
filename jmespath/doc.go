// Package jmespath implements JMESPath (https://jmespath.org), the query
// language for JSON, as the original specification and its reference
// implementation, jmespath.py, define it, plus the functions that Powertools
// for AWS Lambda adds: powertools_json, powertools_base64 and
// powertools_base64_gzip.
//
// # Use
//
// [Compile] parses an expression once; [Expression.Search] evaluates it on
// decoded JSON and [Expression.SearchJSON] on raw JSON bytes:
//
//	expr, err := jmespath.Compile("powertools_json(body).order_id")
//	...
//	id, err := expr.SearchJSON(event)
//
// A compiled [Expression] is immutable and safe for concurrent use.
//
// [Expression.SearchJSON] reads raw JSON as a handler that decodes it
// into a struct with encoding/json does, and refuses what that handler
// could read otherwise than the search: an object anywhere with two names
// that encoding/json takes for one ("ORDER_ID" and "order_id"), text that
// it decodes as U+FFFD, a field looked up beside a name that folds to its
// own. Where it answers, [Expression.Search] on the decoded document
// answers the same. SearchJSON's documentation gives the rules. A chain
// of fields, indexes, list projections and Powertools calls at the start
// of an expression, as in `powertools_json(body).items[*].sku` or
// `Records[*].powertools_json(powertools_base64_gzip(kinesis.data)).id`,
// is followed in the raw bytes in one pass, decoding only what it
// selects; so is a multi-select of such chains, at the root or after a
// chain: `[customer_id, order_id]`,
// `powertools_json(body).[amount,currency]`. Other expressions decode
// the whole document first.
//
// [SearchJSONAll] evaluates several expressions on one document, read
// once, within one budget: an idempotency key and a payload-validation
// expression, say.
//
// # Data
//
// Search takes what encoding/json decodes into an any: nil, bool, float64,
// json.Number (with Decoder.UseNumber), string, []any and map[string]any.
// Values of other Go types are carried through unchanged but match no
// JMESPath type: functions reject them with an [*InvalidTypeError] and they
// equal nothing. The data must be a tree (no cycles). Search never modifies
// it; results may share arrays and objects with it.
//
// Numbers keep their precision wherever the specification allows.
// Comparisons (==, <, max, sort, ...) use exact decimal values: json.Number
// texts of any size or precision compare exactly, and a float64 counts as
// the shortest decimal that encoding/json writes for it. abs, ceil and floor
// return an integer json.Number unchanged but for its sign; max, min and
// sort return elements unchanged; sum of integer json.Numbers is exact
// while it fits in an int64; to_string of a json.Number is its text;
// to_number of a string returns a json.Number holding that text. Other
// arithmetic (avg, any other sum) uses float64. SearchJSON and
// powertools_json decode numbers as json.Number.
//
// Object wildcards (*), keys and values list an object's members in key
// order, since Go maps keep no order.
//
// # Decoding budget
//
// A search decodes within a budget of bytes, its decode limit: 16 MiB
// (16 << 20) unless [WithDecodeLimit] sets another. All that it decodes
// draws on it, counted as it is made, at the memory it takes: the output
// of powertools_base64 and powertools_base64_gzip (and the gzip reader's
// 48 KiB, and a copy of their input where SearchJSON reads it in the
// bytes), the values that SearchJSON builds from the bytes and from the
// documents that powertools_json decodes (the ones its paths select, or
// the whole document where the expression needs it), and the lists and
// objects that projections and multi-selects make. A string costs its
// bytes and 16, a list 24 and 16 for each slot its growth allocates, an
// object 48, then 288 at its first member and 192 for each past the
// eighth, names' bytes included. A search that would go past its budget
// is refused with an [*InvalidValueError] wrapping a [*TooLargeError],
// before it allocates what it would need: base64's output size is known
// before decoding, gzip stops decompressing where the budget ends, and a
// document is counted while it is decoded, so that a few bytes of gzip
// cannot stand for gigabytes, nor "{}," for the map and slot of 64 bytes
// that each three of them would decode into. What a search allocates
// stays within a small multiple of its budget: the idempotency package
// states it and tests it. [SearchJSONAll] spends one budget, the least
// of its expressions' limits, on all of them. The default holds every
// payload AWS delivers read through a path to it (a Kinesis record holds
// up to 10 MiB); a whole document costs 2.5 to 6 times its size in AWS's
// sample events.
//
// # Errors
//
// Compile reports a [*SyntaxError] with the byte offset of the problem, an
// [*UnknownFunctionError] or an [*ArityError] for a bad function call (both
// are always known at compile time), and an [*InvalidValueError] for a slice
// step of 0. An expression nested more than 256 levels deep is a syntax
// error, so that no input can exhaust the stack.
//
// Search reports an [*InvalidTypeError] when a function gets an argument of
// a type it does not accept, or when an expression reference (&expr) is
// evaluated anywhere but as a function argument, and an [*InvalidValueError]
// when a value cannot be used (text that is not JSON, base64, gzip or
// UTF-8), or a search goes past its budget. SearchJSON reports a
// document that is not JSON, or that is ambiguous, as an
// [*InvalidValueError] wrapping the scanner's error. SearchJSONAll wraps
// its error in an [*ExpressionError] naming the expression. Use errors.As
// to inspect them.
//
// # Custom functions
//
// [WithFunctions] adds functions described by [Function]. Their names and
// argument counts are checked by Compile; their argument types are checked
// before each call, as for the built-in functions. An argument written as
// &expr reaches the function as an [*ExpRef].
//
// # Differences from jmespath.py
//
// The parser is stricter where jmespath.py accepts by accident: function
// arguments, multi-select entries and hash pairs need commas between them.
// Slices always start a projection, as in the specification. Ordering
// comparisons (<, <=, >, >=) accept two numbers or, as in jmespath.py, two
// strings, and give null for anything else. Arguments of type any do not
// accept an expression reference.
package jmespath
