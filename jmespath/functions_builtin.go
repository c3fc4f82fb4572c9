package jmespath

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// builtins holds the functions of the JMESPath specification and the
// Powertools ones. It is read-only after package initialisation.
var builtins = map[string]*Function{}

func builtin(name string, variadic bool, call func([]any) (any, error), params ...ArgType) *Function {
	f := &Function{Name: name, Variadic: variadic, Call: call, builtin: true}
	for _, t := range params {
		f.Params = append(f.Params, Param{Types: t})
	}
	builtins[name] = f
	return f
}

func init() {
	builtin("abs", false, fnAbs, TypeNumber)
	builtin("avg", false, fnAvg, TypeArrayNumber)
	builtin("ceil", false, func(a []any) (any, error) { return round(a[0], math.Ceil), nil }, TypeNumber)
	builtin("contains", false, fnContains, TypeArray|TypeString, TypeAny)
	builtin("ends_with", false, func(a []any) (any, error) {
		return strings.HasSuffix(a[0].(string), a[1].(string)), nil
	}, TypeString, TypeString)
	builtin("floor", false, func(a []any) (any, error) { return round(a[0], math.Floor), nil }, TypeNumber)
	builtin("join", false, fnJoin, TypeString, TypeArrayString)
	builtin("keys", false, fnKeys, TypeObject)
	builtin("length", false, fnLength, TypeString|TypeArray|TypeObject)
	builtin("map", false, fnMap, TypeExpRef, TypeArray)
	builtin("max", false, func(a []any) (any, error) { return extreme(a[0].([]any), 1), nil }, TypeArrayNumber|TypeArrayString)
	builtin("max_by", false, func(a []any) (any, error) { return extremeBy("max_by", a, 1) }, TypeArray, TypeExpRef)
	builtin("merge", true, fnMerge, TypeObject)
	builtin("min", false, func(a []any) (any, error) { return extreme(a[0].([]any), -1), nil }, TypeArrayNumber|TypeArrayString)
	builtin("min_by", false, func(a []any) (any, error) { return extremeBy("min_by", a, -1) }, TypeArray, TypeExpRef)
	builtin("not_null", true, fnNotNull, TypeAny)
	builtin("reverse", false, fnReverse, TypeArray|TypeString)
	builtin("sort", false, fnSort, TypeArrayNumber|TypeArrayString)
	builtin("sort_by", false, fnSortBy, TypeArray, TypeExpRef)
	builtin("starts_with", false, func(a []any) (any, error) {
		return strings.HasPrefix(a[0].(string), a[1].(string)), nil
	}, TypeString, TypeString)
	builtin("sum", false, fnSum, TypeArrayNumber)
	builtin("to_array", false, func(a []any) (any, error) {
		if arr, ok := a[0].([]any); ok {
			return arr, nil
		}
		return []any{a[0]}, nil
	}, TypeAny)
	builtin("to_number", false, fnToNumber, TypeAny)
	builtin("to_string", false, fnToString, TypeAny)
	builtin("type", false, func(a []any) (any, error) { return typeName(a[0]), nil }, TypeAny)
	builtin("values", false, func(a []any) (any, error) { return sortedValues(a[0].(map[string]any)), nil }, TypeObject)
}

func fnAbs(a []any) (any, error) {
	if n, ok := a[0].(json.Number); ok && isIntText(string(n)) {
		return json.Number(strings.TrimPrefix(string(n), "-")), nil
	}
	return math.Abs(toFloat(a[0])), nil
}

// round applies ceil or floor; an integer json.Number is kept as it is, so
// that large integers keep every digit.
func round(v any, f func(float64) float64) any {
	if n, ok := v.(json.Number); ok && isIntText(string(n)) {
		return n
	}
	return f(toFloat(v))
}

func fnAvg(a []any) (any, error) {
	arr := a[0].([]any)
	if len(arr) == 0 {
		return nil, nil
	}
	s := 0.0
	for _, v := range arr {
		s += toFloat(v)
	}
	return s / float64(len(arr)), nil
}

// fnSum adds exactly while every element is an integer json.Number and the
// total fits in an int64; otherwise it adds float64s.
func fnSum(a []any) (any, error) {
	arr := a[0].([]any)
	var total int64
	exact := true
	for _, v := range arr {
		n, ok := v.(json.Number)
		if !ok {
			exact = false
			break
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || (i > 0 && total > math.MaxInt64-i) || (i < 0 && total < math.MinInt64-i) {
			exact = false
			break
		}
		total += i
	}
	if exact && len(arr) > 0 {
		return json.Number(strconv.FormatInt(total, 10)), nil
	}
	s := 0.0
	for _, v := range arr {
		s += toFloat(v)
	}
	return s, nil
}

func fnContains(a []any) (any, error) {
	switch subject := a[0].(type) {
	case string:
		s, ok := a[1].(string)
		return ok && strings.Contains(subject, s), nil
	case []any:
		for _, e := range subject {
			if equal(e, a[1]) {
				return true, nil
			}
		}
	}
	return false, nil
}

func fnJoin(a []any) (any, error) {
	glue, arr := a[0].(string), a[1].([]any)
	var b strings.Builder
	for i, e := range arr {
		if i > 0 {
			b.WriteString(glue)
		}
		b.WriteString(e.(string))
	}
	return b.String(), nil
}

func fnKeys(a []any) (any, error) {
	keys := sortedKeys(a[0].(map[string]any))
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out, nil
}

func fnLength(a []any) (any, error) {
	switch v := a[0].(type) {
	case string:
		return float64(utf8.RuneCountInString(v)), nil
	case []any:
		return float64(len(v)), nil
	case map[string]any:
		return float64(len(v)), nil
	}
	return nil, nil
}

func fnMap(a []any) (any, error) {
	ref, arr := a[0].(*ExpRef), a[1].([]any)
	out := make([]any, len(arr))
	for i, e := range arr {
		r, err := ref.Search(e)
		if err != nil {
			return nil, err
		}
		out[i] = r
	}
	return out, nil
}

// compareSame orders two numbers or two strings.
func compareSame(x, y any) int {
	if xs, ok := x.(string); ok {
		return strings.Compare(xs, y.(string))
	}
	c, _ := compareNumbers(x, y)
	return c
}

// extreme returns the largest (sign 1) or smallest (sign -1) element of an
// array of numbers or of strings, or null for an empty one.
func extreme(arr []any, sign int) any {
	var best any
	for i, e := range arr {
		if i == 0 || compareSame(e, best)*sign > 0 {
			best = e
		}
	}
	return best
}

// sortKeys evaluates ref on each element; keys must be all numbers or all
// strings, as in jmespath.py.
func sortKeys(fn string, arr []any, ref *ExpRef) ([]any, error) {
	keys := make([]any, len(arr))
	for i, e := range arr {
		k, err := ref.Search(e)
		if err != nil {
			return nil, err
		}
		ok := isNumber(k) || isString(k)
		if ok && i > 0 {
			ok = isString(k) == isString(keys[0])
		}
		if !ok {
			want := TypeNumber | TypeString
			if i > 0 {
				want = TypeString
				if isNumber(keys[0]) {
					want = TypeNumber
				}
			}
			return nil, &InvalidTypeError{Function: fn, Arg: 1, Want: want, Got: typeName(k)}
		}
		keys[i] = k
	}
	return keys, nil
}

func extremeBy(fn string, a []any, sign int) (any, error) {
	arr := a[0].([]any)
	keys, err := sortKeys(fn, arr, a[1].(*ExpRef))
	if err != nil || len(arr) == 0 {
		return nil, err
	}
	best := 0
	for i := 1; i < len(arr); i++ {
		if compareSame(keys[i], keys[best])*sign > 0 {
			best = i
		}
	}
	return arr[best], nil
}

func fnSort(a []any) (any, error) {
	out := slices.Clone(a[0].([]any))
	slices.SortStableFunc(out, compareSame)
	return out, nil
}

func fnSortBy(a []any) (any, error) {
	arr := a[0].([]any)
	keys, err := sortKeys("sort_by", arr, a[1].(*ExpRef))
	if err != nil {
		return nil, err
	}
	order := make([]int, len(arr))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return compareSame(keys[i], keys[j]) })
	out := make([]any, len(arr))
	for i, j := range order {
		out[i] = arr[j]
	}
	return out, nil
}

func fnMerge(a []any) (any, error) {
	out := map[string]any{}
	for _, m := range a {
		for k, v := range m.(map[string]any) {
			out[k] = v
		}
	}
	return out, nil
}

func fnNotNull(a []any) (any, error) {
	for _, v := range a {
		if v != nil {
			return v, nil
		}
	}
	return nil, nil
}

func fnReverse(a []any) (any, error) {
	if s, ok := a[0].(string); ok {
		r := []rune(s)
		slices.Reverse(r)
		return string(r), nil
	}
	out := slices.Clone(a[0].([]any))
	slices.Reverse(out)
	return out, nil
}

// fnToNumber returns a string's number as a json.Number, so that no digit
// is lost. Like jmespath.py (Python's int and float), it allows surrounding
// spaces, a leading '+', leading zeros and a bare '.', as in "5." or ".5";
// the json.Number holds the number in JSON form. Other text gives null.
func fnToNumber(a []any) (any, error) {
	switch v := a[0].(type) {
	case float64, json.Number:
		return v, nil
	case string:
		if n, ok := numberText(v); ok {
			return n, nil
		}
	}
	return nil, nil
}

// numberText rewrites a decimal number as JSON number text.
func numberText(s string) (json.Number, bool) {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	digits := func() string {
		i := 0
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		d := s[:i]
		s = s[i:]
		return d
	}
	whole := digits()
	var frac string
	if strings.HasPrefix(s, ".") {
		s = s[1:]
		frac = digits()
	}
	if whole == "" && frac == "" {
		return "", false
	}
	var exp string
	if s != "" && (s[0] == 'e' || s[0] == 'E') {
		exp, s = s, ""
		if !isJSONExponent(exp) {
			return "", false
		}
	}
	if s != "" {
		return "", false
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	b.WriteString(whole)
	if frac != "" {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	b.WriteString(exp)
	return json.Number(b.String()), true
}

// isJSONExponent reports whether s is e or E, an optional sign and digits.
func isJSONExponent(s string) bool {
	s = s[1:]
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func fnToString(a []any) (any, error) {
	if s, ok := a[0].(string); ok {
		return s, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a[0]); err != nil {
		return nil, &InvalidValueError{Function: "to_string", Msg: "cannot encode value as JSON", Err: err}
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}
