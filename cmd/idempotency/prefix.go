package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gopowertools/lambda/powertools/idempotency"
)

// prefixScanLimit is how many items (DynamoDB) or keys (Redis) forget and
// resolve --failed read, at most, to find out whether a key without a
// record has a prefix that the store holds records of: enough for most
// tables, bounded for the rest, and said in the answer.
const prefixScanLimit = 10_000

// prefixSearch is what a bounded scan for the records of a key prefix
// found.
type prefixSearch struct {
	found   bool
	scanned int
	noun    string // what scanned counts: items, or keys
	// complete reports that the scan read the whole store.
	complete bool
	// others are the other prefixes seen, with how many records each.
	others map[string]int
}

// lookForPrefix scans store until it finds a record whose key has prefix,
// the store ends, or limit items (keys) were read.
func lookForPrefix(ctx context.Context, store recordStore, prefix string, limit int) (prefixSearch, error) {
	_, many := store.scanned()
	s := prefixSearch{noun: many, complete: true, others: map[string]int{}}
	for page, err := range store.scan(ctx, "") {
		if err != nil {
			return s, err
		}
		s.scanned += page.Scanned
		keys := make([]string, 0, len(page.Records)+len(page.Corrupted))
		for _, rec := range page.Records {
			keys = append(keys, rec.Key)
		}
		for _, err := range page.Corrupted {
			if e, ok := errors.AsType[*idempotency.CorruptedRecordError](err); ok {
				keys = append(keys, e.Key)
			}
		}
		for _, key := range keys {
			p, _ := keyPrefix(key)
			if p == prefix {
				s.found = true
				return s, nil
			}
			s.others[p]++
		}
		if s.scanned >= limit {
			s.complete = false
			break
		}
	}
	return s, nil
}

// says puts into words a search that found no record of prefix: what it
// read, and the prefixes it found instead.
func (s prefixSearch) says(prefix string) string {
	what := fmt.Sprintf("none of the %d %s of the store has its prefix %s", s.scanned, s.noun, printable(prefix))
	if !s.complete {
		what = fmt.Sprintf("none of the first %d %s of the store (it has more, which were not read) has its prefix %s", s.scanned, s.noun, printable(prefix))
	}
	if len(s.others) == 0 {
		return what + ", nor any other"
	}
	prefixes := slices.SortedFunc(maps.Keys(s.others), func(a, b string) int {
		return cmp.Or(cmp.Compare(s.others[b], s.others[a]), strings.Compare(a, b))
	})
	const shown = 10
	var names []string
	for _, p := range prefixes[:min(len(prefixes), shown)] {
		names = append(names, fmt.Sprintf("%s (%s)", printable(p), count(s.others[p], "record", "records")))
	}
	if len(prefixes) > shown {
		names = append(names, fmt.Sprintf("and %d more", len(prefixes)-shown))
	}
	return what + "; the prefixes there: " + strings.Join(names, ", ")
}
