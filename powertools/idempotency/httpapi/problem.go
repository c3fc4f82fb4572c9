package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/gopowertools/lambda/powertools/idempotency/internal/adapters"
)

// problemType is the media type of an RFC 9457 problem details document.
const problemType = "application/problem+json"

// blankType is the problem type of RFC 9457 (section 4.2.1) that means no
// more than the status code: the default of [WithProblemTypeBase].
const blankType = "about:blank"

// problem is an RFC 9457 problem details document, and the Retry-After of
// the response that carries it. Code is an extension member: the problem's
// name, stable whatever its type URI, for a client's program to branch on.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
	Code   string `json:"code"`

	retryAfter int // seconds; 0: no Retry-After
}

// withType returns p with its type URI: base followed by its code, with
// its own title; or, with base about:blank, about:blank, whose title RFC
// 9457 asks to be the status phrase. Code tells the problems apart either
// way.
func (p problem) withType(base string) problem {
	if base == blankType {
		p.Type, p.Title = blankType, statusPhrase(p.Status)
		return p
	}
	p.Type = base + p.Code
	return p
}

// statusPhrase is the reason phrase RFC 9110 gives status, which
// http.StatusText gives too but for 422, whose name RFC 9110 changed.
func statusPhrase(status int) string {
	if status == http.StatusUnprocessableEntity {
		return "Unprocessable Content"
	}
	return http.StatusText(status)
}

// checkTypeBase returns why base cannot start problem type URIs, or nil:
// it must be about:blank, or an absolute URI (RFC 9457 asks for one, so
// that the type does not depend on where the document was found) that
// the codes can follow.
func checkTypeBase(base string) error {
	if base == blankType {
		return nil
	}
	u, err := url.Parse(base)
	switch {
	case err != nil:
		return err
	case !u.IsAbs():
		return errors.New("not an absolute URI: give its scheme, as in https://api.example.com/problems/")
	case strings.ContainsAny(base, " \t\r\n\"<>\\^`{|}"):
		return errors.New("holds characters a URI cannot")
	}
	return nil
}

func (p problem) encode() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // four strings and an int
	}
	return string(b)
}

// storeRetryAfter is the Retry-After of a 503 for a store failure. The
// store's client has retried already, so the failure may last a little,
// but how long is not known: a retry that comes while the failed invocation
// may still hold the key gets a 409 with that lease's exact end.
const storeRetryAfter = 1

// problemFor returns the answer to err, an error of the middleware's, with
// ok false for any other error (the handler's own). The status and the
// code are the middleware's table's; the words are the adapter's. Where a
// time matters, it is measured from now. header says whether the key
// comes from the Idempotency-Key header, for the wording of a missing key.
func problemFor(err error, now time.Time, header bool) (p problem, ok bool) {
	status, code, cause := adapters.Answer(err)
	if status == 0 {
		return problem{}, false
	}
	text := problemTexts[code]
	p = newProblem(code, status, text.title, text.detail)
	switch e := cause.(type) {
	case *idempotency.InProgressError:
		p.retryAfter = retryAfter(e.LeaseEnd, now)
	case *idempotency.MissingKeyError:
		if header {
			p.Detail = "This operation requires an Idempotency-Key header, such as Idempotency-Key: \"8e03978e-40d5-43e8-bc93-6894a57f9324\"."
		}
	case *idempotency.UncertainError:
		if !e.LeaseEnd.IsZero() {
			p.retryAfter = retryAfter(e.LeaseEnd, now)
		}
	case *idempotency.AbandonedError:
		p.Detail = "An earlier request with this idempotency key ended before it finished and may or may not have taken effect; a person will check. Do not send it again with a new key; retry later with the same one."
	case *idempotency.PersistenceError:
		if e.Op == "complete" {
			p.Detail = "The outcome of the request could not be recorded. Retry it unchanged, with the same idempotency key, to learn it."
		}
		p.retryAfter = storeRetryAfter
	}
	return p, true
}

// problemTexts are the title and detail of each problem code of the
// middleware's errors.
var problemTexts = map[string]struct{ title, detail string }{
	"in-progress": {"A request with this idempotency key is outstanding",
		"A request with the same idempotency key is being processed. Retry it unchanged after the Retry-After delay to get its response."},
	"key-reused": {"Idempotency key already used",
		"This idempotency key was used for a request with another payload. A retry must repeat its request unchanged; a new request needs a new key."},
	"missing-key": {"Idempotency key missing",
		"This operation requires an idempotency key, and the request carries none."},
	"ambiguous-request": {"Request has no single meaning",
		"The request names a field twice, perhaps in another letter case, or its body is not the JSON this operation reads its idempotency key or payload from."},
	"outcome-uncertain": {"Outcome being checked",
		"An earlier request with this idempotency key may or may not have taken effect, and that is being checked, by a person if need be. Do not send it again with a new key; retry later with the same one."},
	"response-not-stored": {"Response not available",
		"The request with this idempotency key was carried out, but its response was not kept and cannot be sent again. Do not repeat the request: look its result up."},
	"record-unreadable": {"Idempotency record unreadable",
		"The record of this idempotency key cannot be read, and an operator must repair it. The request was not carried out."},
	"store-unavailable": {"Idempotency store unavailable",
		"The request could not be recorded, so it was not carried out. Retry it unchanged, with the same idempotency key."},
}

// keyProblem is the answer to a request whose Idempotency-Key header is
// refused by readKey.
func keyProblem(err error) problem {
	detail := "The Idempotency-Key header must be a string, such as Idempotency-Key: \"8e03978e-40d5-43e8-bc93-6894a57f9324\"."
	if errors.Is(err, errKeyAmbiguous) {
		detail = "The request carries the Idempotency-Key header more than once, or under more than one spelling. Send it exactly once."
	}
	return newProblem("invalid-key", http.StatusBadRequest, "Idempotency-Key header invalid", detail)
}

// newProblem returns the problem code, with its title; its type is set
// by withType.
func newProblem(code string, status int, title, detail string) problem {
	return problem{Code: code, Title: title, Status: status, Detail: detail}
}

// retryAfter is the Retry-After, in whole seconds, for a key held until
// end: the time left, rounded up, and at least 1.
func retryAfter(end, now time.Time) int {
	secs := int((end.Sub(now) + time.Second - 1) / time.Second)
	return max(secs, 1)
}
