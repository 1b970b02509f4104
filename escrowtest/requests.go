package escrowtest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/escrowkit/escrow-go/internal/hooksecret"
)

// Request is one API request as the emulator's request log keeps it (Requests, GET
// /_emulator/requests, the page's Requests tab): faulted and refused ones too, so that a
// call that failed leaves a trace whoever made it. Bodies are kept with every credential
// removed (see Requests).
type Request struct {
	// Seq numbers the requests from 1, in the order they arrived; GET
	// /_emulator/requests?after=SEQ lists those that came after one.
	Seq int64 `json:"seq"`
	// Time is the emulator's time when the request arrived.
	Time     time.Time `json:"time"`
	Method   string    `json:"method"`
	Path     string    `json:"path"` // with the query, as sent
	Endpoint string    `json:"endpoint"`
	// Account is the caller's address when its credentials were valid, "" otherwise.
	Account    string `json:"account"`
	AsCustomer string `json:"as_customer,omitempty"`
	// Status is the answer's status, 0 when a fault dropped the connection.
	Status int `json:"status"`
	// LatencyMS is how long the emulator took to answer, in milliseconds of real time,
	// an injected latency included.
	LatencyMS int64 `json:"latency_ms"`
	// Fault names the injected fault that touched the request, "" when none did.
	Fault        string `json:"fault,omitempty"`
	RequestBody  string `json:"request_body,omitempty"`
	ResponseBody string `json:"response_body,omitempty"`
}

// maxRequests is how many requests the log keeps: the latest ones.
const maxRequests = 1000

// maxLoggedBody is how much of a body the log keeps; the rest is cut, saying how much.
const maxLoggedBody = 16 << 10

// requestLog is a ring of the latest requests, with its own lock: recording never waits
// for the emulator's.
type requestLog struct {
	mu   sync.Mutex
	ring []Request // at most maxRequests, oldest at head once full
	head int
	seq  int64
}

func (l *requestLog) add(r Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	r.Seq = l.seq
	if len(l.ring) < maxRequests {
		l.ring = append(l.ring, r)
		return
	}
	l.ring[l.head] = r
	l.head = (l.head + 1) % maxRequests
}

// list returns the kept requests, oldest first.
func (l *requestLog) list() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Request, 0, len(l.ring))
	out = append(out, l.ring[l.head:]...)
	return append(out, l.ring[:l.head]...)
}

// reset forgets the requests; numbering goes on, so that a follower asking for those
// after a number it saw misses none.
func (l *requestLog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ring, l.head = nil, 0
}

// Requests returns the latest API requests (up to 1000), oldest first: method, path,
// caller, As-Customer, status, latency and the bodies, the first 16 KiB of each. Requests
// that a fault answered or dropped are there too; the control API's are not. No body
// holds a credential: the caller's key or password and its Authorization value, anything
// shaped like an API key, the values of fields named password, api_key, key, secret or
// token, and the delivery secrets in webhook URLs (masked as webhook.MaskURL does) are
// replaced.
func (e *Emulator) Requests() []Request { return e.requests.list() }

// trace is a request being answered, as the log will keep it.
type trace struct {
	Request
	start time.Time
	creds [][]byte // the caller's secret and Authorization token, removed from bodies
}

func (e *Emulator) newTrace(r *http.Request, endpoint string) *trace {
	t := &trace{start: time.Now(), Request: Request{
		Time: e.clock.now(), Method: r.Method, Path: r.URL.RequestURI(), Endpoint: endpoint,
		AsCustomer: r.Header.Get(asCustomerHeader),
	}}
	if _, secret, ok := r.BasicAuth(); ok && secret != "" {
		t.creds = append(t.creds, []byte(secret))
	}
	if scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && token != "" {
		t.creds = append(t.creds, []byte(strings.TrimSpace(token)))
		if strings.EqualFold(scheme, "basic") {
			if raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(token)); err == nil {
				t.creds = append(t.creds, raw) // "email:secret"
			}
		}
	}
	return t
}

// finish records the request with its answer: status 0 for a dropped connection.
func (e *Emulator) finish(t *trace, status int, reqBody, respBody []byte) {
	t.Status = status
	t.LatencyMS = time.Since(t.start).Milliseconds()
	t.RequestBody = scrubBody(reqBody, t.creds)
	t.ResponseBody = scrubBody(respBody, t.creds)
	e.requests.add(t.Request)
}

// FaultEffect says what a fault does, as the request log and the CLI show it: "latency
// 200ms, status 503", "dropped after handling".
func FaultEffect(f Fault) string {
	var parts []string
	if f.Latency > 0 {
		parts = append(parts, "latency "+f.Latency.String())
	}
	if f.Status != 0 {
		parts = append(parts, "status "+strconv.Itoa(f.Status))
	}
	if f.LatencyAfter > 0 {
		parts = append(parts, "latency after handling "+f.LatencyAfter.String())
	}
	switch f.Drop {
	case DropBefore:
		parts = append(parts, "dropped before handling")
	case DropAfter:
		parts = append(parts, "dropped after handling")
	}
	return strings.Join(parts, ", ")
}

// redactedValue stands where a credential was.
const redactedValue = "[redacted]"

// secretFields are the JSON fields whose values the log never shows.
var secretFields = []string{"password", "api_key", "key", "secret", "token", "authorization"}

// scrubBody is a body as the log keeps it: credentials removed, then cut to
// maxLoggedBody. The whole body is scrubbed before it is cut, so that no part of a secret
// the cut would have split survives. Every pass is linear, finding its candidates with
// bytes.Index, so that logging costs a small part of answering.
func scrubBody(body []byte, creds [][]byte) string {
	if len(body) == 0 {
		return ""
	}
	for _, c := range creds {
		if len(c) > 0 {
			body = bytes.ReplaceAll(body, c, []byte(redactedValue))
		}
	}
	body = replaceAll(body, findURL, func(u []byte) []byte { return []byte(hooksecret.MaskURL(string(u))) })
	body = replaceAll(body, findSecretValue, func(field []byte) []byte {
		name, _, _ := bytes.Cut(field[1:], []byte(`"`))
		return []byte(`"` + string(name) + `":"` + redactedValue + `"`)
	})
	body = replaceAll(body, findKey, func([]byte) []byte { return []byte(redactedValue) })
	if len(body) <= maxLoggedBody {
		return strings.ToValidUTF8(string(body), "\uFFFD")
	}
	cut := maxLoggedBody
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(body[:cut]), "\uFFFD") + fmt.Sprintf("… (%d bytes in all)", len(body))
}

// replaceAll replaces every span find reports, from left to right; find returns the span
// [start, end) of the next match at or after from, or ok false.
func replaceAll(b []byte, find func(b []byte, from int) (start, end int, ok bool), with func([]byte) []byte) []byte {
	var out []byte
	last := 0
	for from := 0; from < len(b); {
		start, end, ok := find(b, from)
		if !ok {
			break
		}
		out = append(append(out, b[last:start]...), with(b[start:end])...)
		last, from = end, max(end, start+1)
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// findURL finds an http or https URL, up to a space, a quote, an angle bracket or a
// backslash: its delivery secret is masked.
func findURL(b []byte, from int) (int, int, bool) {
	for {
		i := bytes.Index(b[from:], []byte("http"))
		if i < 0 {
			return 0, 0, false
		}
		start := from + i
		rest := b[start:]
		if bytes.HasPrefix(rest, []byte("http://")) || bytes.HasPrefix(rest, []byte("https://")) {
			end := bytes.IndexAny(rest, " \t\r\n\"'<>\\")
			if end < 0 {
				end = len(rest)
			}
			return start, start + end, true
		}
		from = start + 4
	}
}

// findSecretValue finds the string value of a JSON field named in secretFields: the span
// from the field's name to the value's closing quote, which it replaces whole.
func findSecretValue(b []byte, from int) (int, int, bool) {
	for {
		i := bytes.IndexByte(b[from:], '"')
		if i < 0 {
			return 0, 0, false
		}
		start := from + i
		if end, ok := secretValueAt(b, start); ok {
			return start, end, true
		}
		from = start + 1
	}
}

// secretValueAt reports whether a secret field's name starts at b[start] (its opening
// quote) with a string value, and where that value ends.
func secretValueAt(b []byte, start int) (int, bool) {
	for _, name := range secretFields {
		rest, ok := bytes.CutPrefix(b[start+1:], []byte(name+`"`))
		if !ok {
			continue
		}
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if rest, ok = bytes.CutPrefix(rest, []byte(":")); !ok {
			return 0, false
		}
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if len(rest) == 0 || rest[0] != '"' {
			return 0, false
		}
		for j := 1; j < len(rest); j++ {
			switch rest[j] {
			case '\\':
				j++
			case '"':
				return len(b) - len(rest) + j + 1, true
			}
		}
		return len(b), true // an unterminated value: hide the rest
	}
	return 0, false
}

// findKey finds text shaped like an API key, as issueKey makes them: digits, "_" and 26
// characters of base32, alone (no letter, digit or "_" either side).
func findKey(b []byte, from int) (int, int, bool) {
	const secretLen = 26
	for {
		i := bytes.IndexByte(b[from:], '_')
		if i < 0 {
			return 0, 0, false
		}
		us := from + i
		start := us
		for start > 0 && b[start-1] >= '0' && b[start-1] <= '9' {
			start--
		}
		end := us + 1 + secretLen
		if start < us && (start == 0 || !wordByte(b[start-1])) && end <= len(b) && base32Run(b[us+1:end]) && (end == len(b) || !wordByte(b[end])) {
			return start, end, true
		}
		from = us + 1
	}
}

func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

func base32Run(b []byte) bool {
	for _, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// requestFilter is what GET /_emulator/requests narrows the log to.
type requestFilter struct {
	account string // part of the caller's address or of As-Customer
	path    string // part of the path
	status  string // a status ("404"), a class ("4xx") or "dropped"
	after   int64  // only requests numbered after this
}

// statusFilter matches a status filter's values: a status, a class or "dropped".
var statusFilter = regexp.MustCompile(`^(?:[1-5][0-9][0-9]|[1-5]xx|dropped)$`)

// matches reports whether a request passes the filter.
func (f requestFilter) matches(r Request) bool {
	switch {
	case r.Seq <= f.after:
		return false
	case f.account != "" && !strings.Contains(r.Account, f.account) && !strings.Contains(strings.ToLower(r.AsCustomer), f.account):
		return false
	case f.path != "" && !strings.Contains(r.Path, f.path):
		return false
	}
	switch {
	case f.status == "":
		return true
	case f.status == "dropped":
		return r.Status == 0
	case strings.HasSuffix(f.status, "xx"):
		return r.Status/100 == int(f.status[0]-'0')
	}
	return strconv.Itoa(r.Status) == f.status
}

type controlRequests struct {
	Requests []Request `json:"requests"`
}

// controlRequests serves GET /_emulator/requests ?account= &path= &status= &after= &limit=:
// the request log, oldest first, the newest limit (100 by default) of those that match.
func (e *Emulator) controlRequests(r *http.Request, _ []byte) (response, error) {
	q := newQuery(r.URL.Query())
	f := requestFilter{
		account: strings.ToLower(strings.TrimSpace(q.values.Get("account"))),
		path:    strings.TrimSpace(q.values.Get("path")),
		status:  strings.ToLower(strings.TrimSpace(q.values.Get("status"))),
	}
	if f.status != "" && !statusFilter.MatchString(f.status) {
		q.errs.add(`must be a status ("404"), a class ("4xx") or "dropped"`, "status")
	}
	f.after = int64(q.integer("after", 0, 0, 1<<62))
	limit := q.integer("limit", defaultRequestLimit, 1, maxRequests)
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	return success(e.requestList(f, limit)), nil
}

// defaultRequestLimit is how many requests GET /_emulator/requests answers unless told.
const defaultRequestLimit = 100

// requestList is the newest limit requests that pass the filter, oldest first.
func (e *Emulator) requestList(f requestFilter, limit int) controlRequests {
	out := []Request{}
	for _, req := range e.Requests() {
		if f.matches(req) {
			out = append(out, req)
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return controlRequests{Requests: out}
}
