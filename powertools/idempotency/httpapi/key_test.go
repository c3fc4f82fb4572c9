package httpapi

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestReadKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		single  map[string]string
		multi   map[string][]string
		key     string
		present bool
		err     error
	}{
		{name: "none", single: map[string]string{"content-type": "application/json"}},
		{name: "no maps"},
		{name: "lower case", single: map[string]string{"idempotency-key": "k1"}, key: "k1", present: true},
		{name: "client's case", single: map[string]string{"Idempotency-Key": "k1"}, key: "k1", present: true},
		{name: "shouted", single: map[string]string{"IDEMPOTENCY-KEY": "k1"}, key: "k1", present: true},
		{name: "sf-string", single: map[string]string{"idempotency-key": `"8e03978e-40d5-43e8-bc93-6894a57f9324"`}, key: "8e03978e-40d5-43e8-bc93-6894a57f9324", present: true},
		{name: "both maps agree", single: map[string]string{"Idempotency-Key": "k1"}, multi: map[string][]string{"Idempotency-Key": {"k1"}}, key: "k1", present: true},
		{name: "multi only", multi: map[string][]string{"Idempotency-Key": {"k1"}}, key: "k1", present: true},

		{name: "two spellings", single: map[string]string{"Idempotency-Key": "k1", "idempotency-key": "k1"}, present: false, err: errKeyAmbiguous},
		{name: "two spellings, two maps", single: map[string]string{"Idempotency-Key": "k1"}, multi: map[string][]string{"idempotency-key": {"k1"}}, err: errKeyAmbiguous},
		{name: "repeated, different values", single: map[string]string{"Idempotency-Key": "k2"}, multi: map[string][]string{"Idempotency-Key": {"k1", "k2"}}, present: true, err: errKeyAmbiguous},
		{name: "repeated, same value", single: map[string]string{"Idempotency-Key": "k1"}, multi: map[string][]string{"Idempotency-Key": {"k1", "k1"}}, present: true, err: errKeyAmbiguous},
		{name: "maps disagree", single: map[string]string{"Idempotency-Key": "k1"}, multi: map[string][]string{"Idempotency-Key": {"k2"}}, present: true, err: errKeyAmbiguous},
		{name: "Kelvin sign", single: map[string]string{"Idempotency-\u212Aey": "k1"}, err: errKeyAmbiguous},
		{name: "Kelvin sign beside the name", single: map[string]string{"idempotency-key": "k1", "idempotency-\u212Aey": "k2"}, err: errKeyAmbiguous},
		{name: "comma-joined, as an HTTP API joins a repeat", single: map[string]string{"idempotency-key": "k1,k2"}, present: true, err: errKeyAmbiguous},
		{name: "comma-joined, same value", single: map[string]string{"idempotency-key": "k1, k1"}, present: true, err: errKeyAmbiguous},
		{name: "comma-joined sf-strings", single: map[string]string{"idempotency-key": `"k1", "k2"`}, present: true, err: errKeyAmbiguous},
		{name: "comma-joined, an sf-string and a token", multi: map[string][]string{"Idempotency-Key": {`"k,1",k2`}}, present: true, err: errKeyAmbiguous},
		{name: "a comma inside an sf-string", single: map[string]string{"idempotency-key": `"k1,k2"`}, key: "k1,k2", present: true},
		{name: "a comma and an empty part", single: map[string]string{"idempotency-key": "k1,"}, present: true, err: errKeyMalformed},
		{name: "a comma and a part that is no key", single: map[string]string{"idempotency-key": "k1,k 2"}, present: true, err: errKeyMalformed},
		{name: "empty", single: map[string]string{"idempotency-key": ""}, present: true, err: errKeyMalformed},
		{name: "no values", multi: map[string][]string{"Idempotency-Key": {}}, present: true, err: errKeyMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, present, err := readKey(tt.single, tt.multi)
			if key != tt.key || !errors.Is(err, tt.err) || (err == nil && present != tt.present) {
				t.Errorf("readKey = %q, %t, %v; want %q, %t, %v", key, present, err, tt.key, tt.present, tt.err)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "": refused
	}{
		{`abc`, "abc"},
		{`"abc"`, "abc"},
		{`  abc	`, "abc"},
		{` "abc" `, "abc"},
		{`"a b,c;d"`, "a b,c;d"},
		{`"a\"b\\c"`, `a"b\c`},
		{`dGVzdA+/=`, "dGVzdA+/="},
		{`"8e03978e-40d5-43e8-bc93-6894a57f9324"`, "8e03978e-40d5-43e8-bc93-6894a57f9324"},

		{``, ""},
		{`  `, ""},
		{`""`, ""},
		{`"abc`, ""},
		{`"abc"x`, ""},
		{`"abc";p=1`, ""},
		{`"a","b"`, ""},
		{`"a\b"`, ""},
		{`"a\`, ""},
		{"\"a\x01\"", ""},
		{"\"caf\u00e9\"", ""},
		{"caf\u00e9", ""},
		{`a b`, ""},
		{`a,b`, ""},
		{`a;b`, ""},
		{`a"b`, ""},
		{`a\b`, ""},
		{"a\x7f", ""},
	}
	for _, tt := range tests {
		got, err := parseKey(tt.in)
		if got != tt.want || (err == nil) != (tt.want != "") {
			t.Errorf("parseKey(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzParseKey checks that an accepted key is printable ASCII, and that
// writing it back as an sf-string gives the same key.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{`abc`, `"abc"`, `"a\"b"`, `"a", "b"`, `"x";p=1`, "caf\u00e9", `""`, ` "k" `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		key, err := parseKey(v)
		if err != nil {
			if key != "" {
				t.Fatalf("parseKey(%q) = %q with error %v", v, key, err)
			}
			return
		}
		if key == "" || !utf8.ValidString(key) {
			t.Fatalf("parseKey(%q) = %q", v, key)
		}
		for i := range len(key) {
			if key[i] < ' ' || key[i] >= 0x7f {
				t.Fatalf("parseKey(%q) = %q, with byte %#x", v, key, key[i])
			}
		}
		quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(key) + `"`
		if again, err := parseKey(quoted); again != key || err != nil {
			t.Fatalf("parseKey(%q) = %q; as an sf-string %s it reads %q, %v", v, key, quoted, again, err)
		}
	})
}

func TestWithScope(t *testing.T) {
	t.Parallel()
	s := scope{Method: "POST", Path: "/payments", Client: "c", Key: "k"}
	for _, event := range []string{`{}`, `{"body":"x"}`} {
		out, err := withScope([]byte(event), s)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("withScope(%s) = %s: %v", event, out, err)
		}
		var gotScope scope
		if err := json.Unmarshal(got[scopeMember], &gotScope); err != nil || gotScope != s {
			t.Errorf("withScope(%s) = %s, scope %+v, want %+v", event, out, gotScope, s)
		}
		if len(got) != strings.Count(event, ":")+1 {
			t.Errorf("withScope(%s) = %s: members lost or added", event, out)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		end  time.Duration
		want int
	}{
		{30 * time.Second, 30},
		{1500 * time.Millisecond, 2},
		{time.Millisecond, 1},
		{0, 1},
		{-time.Minute, 1},
	}
	for _, tt := range tests {
		if got := retryAfter(now.Add(tt.end), now); got != tt.want {
			t.Errorf("retryAfter(now+%v) = %d, want %d", tt.end, got, tt.want)
		}
	}
}

func TestIsToken(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"Idempotency-Replayed": true, "X-Replayed_1": true,
		"": false, "Idempotency Replayed": false, "a:b": false, "caf\u00e9": false, strconv.Itoa(1): true,
	} {
		if got := isToken(s); got != want {
			t.Errorf("isToken(%q) = %t, want %t", s, got, want)
		}
	}
}
