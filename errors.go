package escrow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Sentinel errors, matched with errors.Is against any error this package returns.
var (
	// ErrUnauthorized: the API answered 401: it refused the credentials sent (a wrong or
	// retired key, another environment's key, an emulator's key after its reset).
	ErrUnauthorized = errors.New("escrow: unauthorized")
	// ErrForbidden: the API answered 403; the caller may not do this. Creating a customer
	// whose e-mail already has an account also answers 403.
	ErrForbidden = errors.New("escrow: forbidden")
	// ErrNotFound: the API answered 404; the resource does not exist or is not visible to
	// the caller (only parties can read a transaction).
	ErrNotFound = errors.New("escrow: not found")
	// ErrRateLimited: the API answered 429, or the client held the call back because the
	// endpoint's allowance was spent and the wait would exceed WithMaxWait.
	ErrRateLimited = errors.New("escrow: rate limited")
	// ErrInvalidArgument: a call was refused before anything was sent, for example an empty
	// reference or a path segment of "..".
	ErrInvalidArgument = errors.New("escrow: invalid argument")
	// ErrMalformedResponse: a 2xx answer whose body could not be decoded. The request did
	// take effect.
	ErrMalformedResponse = errors.New("escrow: malformed response")
	// ErrRedirectRefused: the server redirected to another host or to plain HTTP, and the
	// client refused to follow with the caller's credentials.
	ErrRedirectRefused = errors.New("escrow: redirect refused")
)

// maxErrorBody caps how much of an error response is read and kept.
const maxErrorBody = 1 << 20

// APIError is an answer outside 2xx.
type APIError struct {
	StatusCode int
	Method     string // the request's method
	Path       string // the request's path, as sent (escaped), without the query
	// Body is the raw response body, at most 1 MiB, with any credential of the client
	// replaced by "[REDACTED]".
	Body []byte
	// Message is the server's explanation: the body's "message" or "error" text when the
	// body is JSON, the title of an HTML page, the first line of plain text, or the status
	// text when the body says nothing.
	Message string
	// Code is the body's short "error" code when it sends one beside a "message".
	Code string
	// Header holds the response headers (the rate-limit headers among them).
	Header http.Header
}

func (e *APIError) Error() string {
	return fmt.Sprintf("escrow: %s %s: %d %s", e.Method, e.Path, e.StatusCode, e.explanation())
}

// Is matches the sentinel for the status, errors.Is(err, ErrNotFound), and the day-one
// failure the answer is, errors.Is(err, ErrBelowMinimumFee) (errors_dayone.go).
func (e *APIError) Is(target error) bool {
	return target != nil && (target == sentinelFor(e.StatusCode) || e.isDayOne(target))
}

func sentinelFor(status int) error {
	switch status {
	case http.StatusUnauthorized:
		return ErrUnauthorized
	case http.StatusForbidden:
		return ErrForbidden
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusTooManyRequests:
		return ErrRateLimited
	}
	return nil
}

// FieldError is one field the API refused, with its messages. Path follows Go-like
// notation: "parties[0].customer", "items[0].schedule[1].amount", "items[0].extra_attributes.year",
// "items[0].fees.all", "currency".
type FieldError struct {
	Path     string
	Messages []string
}

func (f FieldError) String() string { return f.Path + ": " + strings.Join(f.Messages, "; ") }

// ValidationError is an answer that carries the API's validation shape: an "errors" object
// keyed by field, nested as deep as the request (spec part 7).
type ValidationError struct {
	*APIError
	fields []FieldError
}

// Fields returns every refused field in the order the server listed them.
func (e *ValidationError) Fields() []FieldError { return append([]FieldError(nil), e.fields...) }

// Field returns the messages for one path, or nil.
func (e *ValidationError) Field(path string) []string {
	for _, f := range e.fields {
		if f.Path == path {
			return f.Messages
		}
	}
	return nil
}

func (e *ValidationError) Error() string {
	const shown = 3
	parts := make([]string, 0, shown+1)
	for i, f := range e.fields {
		if i == shown {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.fields)-shown))
			break
		}
		parts = append(parts, f.String())
	}
	return fmt.Sprintf("escrow: %s %s: %d invalid: %s", e.Method, e.Path, e.StatusCode, strings.Join(parts, ", "))
}

// Unwrap gives errors.As access to the *APIError.
func (e *ValidationError) Unwrap() error { return e.APIError }

// RateLimitError reports that an endpoint's allowance is spent and the client gave up
// waiting: its retries ran out, or the wait the server asked for exceeds WithMaxWait.
type RateLimitError struct {
	Method, Path string
	// Endpoint is the route the limit applies to, such as "GET /transaction/{id}".
	Endpoint string
	// RetryAfter is how long the server asked the caller to wait (0 when it did not say),
	// at most the client's maximum hold (see WithMaxHold): after it, a call probes the
	// endpoint again, whatever the server asked.
	RetryAfter time.Duration
	// Response is the 429 answer, or nil when the client held the call back without
	// sending it because the endpoint had no requests remaining.
	Response *APIError
}

func (e *RateLimitError) Error() string {
	what := "429 Too Many Requests"
	if e.Response == nil {
		what = "held back: no requests remaining"
	}
	if e.RetryAfter > 0 {
		return fmt.Sprintf("escrow: %s %s: %s (retry after %s)", e.Method, e.Path, what, e.RetryAfter)
	}
	return fmt.Sprintf("escrow: %s %s: %s", e.Method, e.Path, what)
}

// Is matches ErrRateLimited.
func (e *RateLimitError) Is(target error) bool { return target == ErrRateLimited }

// Unwrap gives errors.As access to the 429 answer when there was one.
func (e *RateLimitError) Unwrap() error {
	if e.Response == nil {
		return nil
	}
	return e.Response
}

// TransportError reports a request that got no HTTP answer: DNS, connection, TLS, timeout,
// a refused redirect, or a cancelled context (errors.Is(err, context.Canceled) holds then).
type TransportError struct {
	Method, Path string
	Attempts     int
	// OutcomeUnknown is true when the request may have reached the server, so that a POST
	// or PATCH may have taken effect. It is false when the request provably never left
	// (DNS, dial or TLS handshake failure, or a context that ended before sending).
	OutcomeUnknown bool
	Err            error
}

func (e *TransportError) Error() string {
	return fmt.Sprintf("escrow: %s %s: %v", e.Method, e.Path, e.Err)
}

// Unwrap returns the underlying network or context error.
func (e *TransportError) Unwrap() error { return e.Err }

// DecodeError reports a 2xx answer whose body is not what the endpoint returns. The request
// took effect; the result is unknown. It matches ErrMalformedResponse.
type DecodeError struct {
	Method, Path string
	StatusCode   int
	Body         []byte // the first 64 KiB of the body
	Err          error
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("escrow: %s %s: %d with an undecodable body: %v", e.Method, e.Path, e.StatusCode, e.Err)
}

// Is matches ErrMalformedResponse.
func (e *DecodeError) Is(target error) bool { return target == ErrMalformedResponse }

// Unwrap returns the JSON error.
func (e *DecodeError) Unwrap() error { return e.Err }

// parseErrorBody builds the error for a non-2xx answer whose body has been read, with the
// fields of the validation shape when the body has one; isJSON says whether it is JSON.
func parseErrorBody(method, path string, resp *http.Response, body []byte) (_ *APIError, _ []FieldError, isJSON bool) {
	apiErr := &APIError{
		StatusCode: resp.StatusCode,
		Method:     method,
		Path:       path,
		Body:       body,
		Header:     resp.Header,
	}
	var doc struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	isJSON = json.Unmarshal(body, &doc) == nil
	if isJSON {
		apiErr.Message = jsonText(doc.Message)
		if code := jsonText(doc.Error); apiErr.Message == "" {
			apiErr.Message = code
		} else {
			apiErr.Code = code
		}
	} else {
		apiErr.Message = textMessage(body)
	}
	if apiErr.Message == "" {
		apiErr.Message = http.StatusText(resp.StatusCode)
	}
	if isJSON && len(doc.Errors) > 0 {
		return apiErr, leafFields(flattenErrors(doc.Errors)), true // errors_leaf.go
	}
	return apiErr, nil, isJSON
}

// jsonText renders a JSON string as itself and anything else (an object, a number) compactly,
// so an unexpected shape still says something.
func jsonText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if prefix, cut := stringPrefix(raw); json.Unmarshal(prefix, &s) == nil {
		if s = truncate(strings.TrimSpace(s), 500); cut && !strings.HasSuffix(s, "…") {
			s += "…"
		}
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return ""
	}
	return truncate(buf.String(), 500)
}

// maxMessageJSON bounds how much of a JSON string is decoded for a message, which keeps
// 500 bytes: a megabyte of message costs no more to show than a short one.
const maxMessageJSON = 16 << 10

// stringPrefix returns raw, or when raw is a JSON string longer than maxMessageJSON, its
// beginning closed again (cut says so): cut between two characters, never inside an
// escape or a character's UTF-8 bytes.
func stringPrefix(raw []byte) (prefix []byte, cut bool) {
	if len(raw) <= maxMessageJSON || raw[0] != '"' {
		return raw, false
	}
	end := 1
	for end < maxMessageJSON {
		n := 1
		if raw[end] == '\\' {
			n = 2
			if raw[end+1] == 'u' {
				n = 6
			}
		}
		if end+n > maxMessageJSON {
			break
		}
		end += n
	}
	for end > 1 && !utf8.RuneStart(raw[end]) {
		end--
	}
	return append(raw[:end:end], '"'), true
}

var htmlTitle = regexp.MustCompile(`(?is)<title[^>]*>(.*?)</title>`)

// textMessage summarises a body that is not JSON: an HTML page's title, or the first
// non-empty line of text.
func textMessage(body []byte) string {
	if m := htmlTitle.FindSubmatch(body); m != nil {
		return truncate(strings.Join(strings.Fields(html.UnescapeString(string(m[1]))), " "), 200)
	}
	if bytes.Contains(bytes.ToLower(body[:min(len(body), 512)]), []byte("<html")) {
		return ""
	}
	for line := range strings.Lines(string(body)) {
		if line = strings.TrimSpace(line); line != "" {
			return truncate(line, 200)
		}
	}
	return ""
}

// flattenErrors walks the validation object in document order. Object keys that are
// integers are list indexes ("0" → [0]); other keys are field names. A list of strings, or a
// lone string, is the messages of the path reached. Anything else is skipped: a strange
// shape must not hide the fields around it.
//
// It reads the bytes once, without encoding/json's token stream (which costs an
// allocation per token: on a large answer, more than the rest of the error's making), and
// stops at the first fault, keeping the fields read before it.
func flattenErrors(raw json.RawMessage) []FieldError {
	w := fieldWalker{data: raw}
	_ = w.value("", 0) // on a fault, keep the fields read before it
	return w.out
}

// maxFieldDepth bounds how deep the walk follows nested objects.
const maxFieldDepth = 32

// errFieldShape stops the walk at a fault of the document.
var errFieldShape = errors.New("malformed validation object")

// fieldWalker reads the tree of an "errors" object into fields.
type fieldWalker struct {
	data []byte
	pos  int
	out  []FieldError
}

// value reads the value at path: a message, an object of fields, a list of messages, or
// anything else, skipped.
func (w *fieldWalker) value(path string, depth int) error {
	if depth > maxFieldDepth {
		return errFieldShape
	}
	switch w.peek() {
	case '{':
		return w.object(path, depth)
	case '[':
		return w.list(path)
	case '"':
		msg, err := w.str()
		if err == nil {
			w.out = append(w.out, FieldError{Path: path, Messages: []string{msg}})
		}
		return err
	}
	_, err := w.skip()
	return err // numbers, booleans, null: no message
}

// peek returns the next byte past white space, 0 at the end.
func (w *fieldWalker) peek() byte {
	for w.pos < len(w.data) {
		switch c := w.data[w.pos]; c {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return c
		}
	}
	return 0
}

// expect consumes c, the next byte past white space.
func (w *fieldWalker) expect(c byte) error {
	if w.peek() != c {
		return errFieldShape
	}
	w.pos++
	return nil
}

// object reads the members of an object at path, each a field below it.
func (w *fieldWalker) object(path string, depth int) error {
	w.pos++ // '{'
	for first := true; ; first = false {
		if w.peek() == '}' {
			w.pos++
			return nil
		}
		if !first {
			if err := w.expect(','); err != nil {
				return err
			}
		}
		key, err := w.str()
		if err != nil {
			return err
		}
		if err := w.expect(':'); err != nil {
			return err
		}
		if err := w.value(joinPath(path, key), depth+1); err != nil {
			return err
		}
	}
}

// list reads a list of messages at path; entries that are not text are shown compactly
// (jsonText), null and empty ones skipped.
func (w *fieldWalker) list(path string) error {
	w.pos++ // '['
	var msgs []string
	for first := true; ; first = false {
		if w.peek() == ']' {
			w.pos++
			break
		}
		if !first {
			if err := w.expect(','); err != nil {
				return err
			}
		}
		var msg string
		if w.peek() == '"' {
			s, err := w.str()
			if err != nil {
				return err
			}
			msg = truncate(strings.TrimSpace(s), 500) // as jsonText shows a string
		} else {
			raw, err := w.skip()
			if err != nil {
				return err
			}
			msg = jsonText(raw)
		}
		if msg != "" {
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) > 0 {
		w.out = append(w.out, FieldError{Path: path, Messages: msgs})
	}
	return nil
}

// str reads a string.
func (w *fieldWalker) str() (string, error) {
	w.peek()
	start := w.pos
	escaped, err := w.strEnd()
	if err != nil {
		return "", err
	}
	if lit := w.data[start+1 : w.pos-1]; !escaped && utf8.Valid(lit) {
		return string(lit), nil
	}
	var s string
	if json.Unmarshal(w.data[start:w.pos], &s) != nil {
		return "", errFieldShape
	}
	return s, nil
}

// strEnd moves past the string at the next byte past white space, and says whether it
// holds an escape.
func (w *fieldWalker) strEnd() (escaped bool, err error) {
	if w.peek() != '"' {
		return false, errFieldShape
	}
	for w.pos++; w.pos < len(w.data); w.pos++ {
		switch w.data[w.pos] {
		case '\\':
			escaped = true
			w.pos++
		case '"':
			w.pos++
			return escaped, nil
		}
	}
	return false, errFieldShape
}

// skip moves past any value and returns its bytes, without decoding them.
func (w *fieldWalker) skip() ([]byte, error) {
	switch w.peek() {
	case 0:
		return nil, errFieldShape
	case '"':
		start := w.pos
		_, err := w.strEnd()
		return w.data[start:w.pos], err
	case '{', '[':
		return w.skipNested()
	}
	start := w.pos
	for w.pos < len(w.data) && !scalarEnds[w.data[w.pos]] {
		w.pos++
	}
	return w.data[start:w.pos], nil
}

// scalarEnds are the bytes that end a number or a literal.
var scalarEnds = [256]bool{',': true, ':': true, ' ': true, '\t': true, '\n': true, '\r': true, '}': true, ']': true, '{': true, '[': true, '"': true}

// skipNested moves past an object or a list, following the nesting by counting brackets
// outside strings.
func (w *fieldWalker) skipNested() ([]byte, error) {
	start, nest := w.pos, 0
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case '"':
			if _, err := w.strEnd(); err != nil {
				return nil, err
			}
			continue
		case '{', '[':
			nest++
		case '}', ']':
			if nest--; nest == 0 {
				w.pos++
				return w.data[start:w.pos], nil
			}
		}
		w.pos++
	}
	return nil, errFieldShape
}

func joinPath(path, key string) string {
	if _, err := strconv.ParseUint(key, 10, 32); err == nil {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}
