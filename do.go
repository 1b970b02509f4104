package escrow

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/escrowkit/escrow-go/internal/redact"
)

// Do sends a request that no method of this package covers yet (an endpoint or a field
// the API added) through the same pipeline as every other call: credentials, User-Agent,
// As-Customer, the retry policy, the endpoint's rate-limit allowance and typed errors.
//
// path is relative to the base URL (its version segment included), with an optional query:
// "transaction/42", "partner/transactions?limit=5". A leading "/" is ignored. An absolute
// URL, an empty segment, and a segment that a server or proxy on the way could read as
// "." or ".." are refused with [ErrInvalidArgument] before anything is sent, so credentials
// never leave for another host or a path outside the base URL: see [Client.Do]'s rules in
// safeSegment (escapes decoded repeatedly, "\" read as "/", ";" path parameters).
//
// body, when not nil (nor a nil pointer), is encoded with encoding/json; a []byte or
// [json.RawMessage] is taken as JSON already encoded, and must be valid. out, when not nil, receives the
// decoded body of a 2xx answer: a pointer to a struct, a map or a *json.RawMessage for the
// document as sent. A 204 or an empty body leaves out untouched (a *json.RawMessage is set
// to nil).
//
// The method decides what is retried, as for every call: GET and DELETE after a 5xx or a
// network failure, any method after a 429.
func (c *Client) Do(ctx context.Context, method, path string, body, out any, opts ...RequestOption) error {
	method = strings.ToUpper(strings.TrimSpace(method))
	if method == "" {
		return fmt.Errorf("%w: empty method", ErrInvalidArgument)
	}
	escaped, rawQuery, err := relativePath(path)
	if err != nil {
		return c.scrubError(err) // it quotes the path, which may hold anything
	}
	if out != nil {
		if v := reflect.ValueOf(out); v.Kind() != reflect.Pointer || v.IsNil() {
			return fmt.Errorf("%w: out must be nil or a non-nil pointer, not %T", ErrInvalidArgument, out)
		}
	}
	if body, err = doBody(body); err != nil {
		return err
	}
	return c.send(ctx, call{route: routeOf(method, escaped), escapedPath: escaped, rawQuery: rawQuery, body: body, out: out, opts: opts})
}

// doBody is the body Client.Do sends: nil for a nil *T (no body, not the JSON null), raw
// bytes as they are, refused when they are not JSON.
func doBody(body any) (any, error) {
	if v := reflect.ValueOf(body); body != nil && v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, nil
	}
	if b, ok := body.([]byte); ok {
		body = json.RawMessage(b)
	}
	if raw, ok := body.(json.RawMessage); ok && !json.Valid(raw) {
		return nil, fmt.Errorf("%w: body is not valid JSON", ErrInvalidArgument)
	}
	return body, nil
}

// routeOf names the endpoint a Client.Do call counts its rate-limit allowance under: a path
// of a known endpoint shares its row's; any other path is counted under its own shape, ids
// folded, so that calls on many ids of one unknown endpoint share one entry.
func routeOf(method, escaped string) Route {
	if r, ok := matchRoute(method, escaped); ok {
		return r
	}
	return Route{Method: method, Template: "/" + foldIDs(escaped)}
}

// relativePath checks a path for [Client.Do] and splits it into an escaped path and a raw
// query.
func relativePath(path string) (escaped, rawQuery string, err error) {
	u, err := url.Parse(strings.TrimPrefix(path, "/"))
	if err != nil {
		return "", "", fmt.Errorf("%w: path: %v", ErrInvalidArgument, err)
	}
	if err := checkRelative(u, path); err != nil {
		return "", "", err
	}
	escaped = u.EscapedPath()
	if !safeSegments(escaped) {
		return "", "", fmt.Errorf("%w: path %q has an empty, \".\", \"..\" or unprintable segment, or one a server could read as \".\" or \"..\"", ErrInvalidArgument, truncate(path, 200))
	}
	return escaped, u.RawQuery, nil
}

// checkRelative refuses a parsed path that names more than a path below the base URL, or
// nothing at all.
func checkRelative(u *url.URL, path string) error {
	switch {
	case u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "":
		return fmt.Errorf("%w: path %q must be relative to the base URL", ErrInvalidArgument, path)
	case u.Fragment != "":
		return fmt.Errorf("%w: path %q must not have a fragment", ErrInvalidArgument, path)
	case u.Path == "":
		return fmt.Errorf("%w: empty path", ErrInvalidArgument)
	}
	return nil
}

// safeSegments reports whether every segment of an escaped path is well escaped, not
// empty, and safe (see safeSegment).
func safeSegments(escaped string) bool {
	for seg := range strings.SplitSeq(escaped, "/") {
		if s, err := url.PathUnescape(seg); err != nil || s == "" || !safeSegment(seg) {
			return false
		}
	}
	return true
}

// safeSegment reports whether an escaped path segment stays one segment below the base
// however a server, or a proxy on the way, reads it. Each of these readings is common
// somewhere, and each has sent requests outside a base path:
//   - escapes decoded again and again ("%252e" is "%2e" is "."), including IIS's "%u002e";
//   - "%2f" decoded into a separator (Apache's AllowEncodedSlashes, many proxies);
//   - "\" taken for "/" (IIS, Windows servers, several proxies);
//   - ";" starting path parameters that are cut off before routing (Tomcat, Jetty: "..;x"
//     is "..");
//   - trailing dots and spaces dropped and full-width dots and slashes folded (Windows,
//     Unicode normalisation), and overlong UTF-8 read as ASCII (old decoders).
//
// So it decodes until nothing changes, refuses control characters and invalid UTF-8, splits
// on every separator, cuts each piece at ";", and refuses a piece made only of dots and
// spaces. Anything else, "%2F" included (a reference with a slash), stays: decoded into
// separators it adds segments under the base but never climbs out of it.
func safeSegment(escaped string) bool {
	s, ok := unescapeFully(escaped)
	if !ok || hasControl(s) || !utf8.ValidString(s) {
		return false
	}
	return !hasDotPiece(lookalikes.Replace(s))
}

// unescapeFully decodes s until nothing changes; false when it is nested beyond what is
// undone here, which is not a path the SDK makes.
func unescapeFully(s string) (string, bool) {
	for range 16 { // each round shortens s; 16 rounds is more nesting than any server undoes
		d := unescapeLenient(s)
		if d == s {
			return s, true
		}
		s = d
	}
	return s, unescapeLenient(s) == s
}

// hasDotPiece reports whether a decoded segment, split on every separator and each piece
// cut at ";", has a piece made only of dots and spaces: one a server could read as "." or
// "..".
func hasDotPiece(s string) bool {
	for piece := range strings.FieldsFuncSeq(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		piece, _, _ = strings.Cut(piece, ";")
		if strings.Trim(piece, ". ") == "" && strings.Contains(piece, ".") {
			return true
		}
	}
	return false
}

// lookalikes folds characters that Unicode normalisation (NFKC) or a lenient server turns
// into a dot or a separator.
var lookalikes = strings.NewReplacer("\uff0e", ".", "\u2024", ".", "\ufe52", ".", "\uff0f", "/", "\u2215", "/", "\u2044", "/", "\uff3c", "\\", "\ufe68", "\\")

// unescapeLenient decodes every well-formed %XX and %uXXXX of s and keeps any other "%" as
// it is, as lenient servers do.
func unescapeLenient(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for i < len(s) {
		if c, ok := hexEscape(s[i:]); ok {
			b = append(b, c)
			i += len("%XX")
		} else if r, ok := unicodeEscape(s[i:]); ok {
			b = utf8.AppendRune(b, r)
			i += len("%uXXXX")
		} else {
			b = append(b, s[i])
			i++
		}
	}
	return string(b)
}

// hexEscape decodes the "%XX" that s starts with; false when it does not start with one.
func hexEscape(s string) (byte, bool) {
	if len(s) < len("%XX") || s[0] != '%' {
		return 0, false
	}
	hi, lo := redact.HexVal(s[1]), redact.HexVal(s[2])
	return byte(hi<<4 | lo), hi >= 0 && lo >= 0
}

// unicodeEscape decodes the IIS-style "%uXXXX" that s starts with; false when it does not
// start with one.
func unicodeEscape(s string) (rune, bool) {
	if len(s) < len("%uXXXX") || s[0] != '%' || (s[1] != 'u' && s[1] != 'U') {
		return 0, false
	}
	v := 0
	for _, h := range []byte(s[2:6]) {
		d := redact.HexVal(h)
		if d < 0 {
			return 0, false
		}
		v = v<<4 | d
	}
	return rune(v), true
}

// foldIDs replaces the all-digit segments of a path with "{id}".
func foldIDs(escaped string) string {
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		if strings.Trim(s, "0123456789") == "" {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

// Response is what an answer said beyond its body; see [WithResponse].
type Response struct {
	// StatusCode is the answer's status; 0 when no answer arrived.
	StatusCode int
	// RateLimit is the endpoint's allowance as the answer stated it.
	RateLimit RateLimit
	// RequestID is the server's id of the request, from the first header whose name is
	// Request-Id or ends in -Request-Id (X-Request-Id, X-Amzn-Request-Id, …); "" if none.
	RequestID string
	// Header holds every header of the answer.
	Header http.Header
}

// RateLimit is what an answer's RateLimit-* headers said. The spec names only
// RateLimit-Remaining; the others are read when present.
type RateLimit struct {
	// Remaining is RateLimit-Remaining: requests left on the endpoint; -1 when absent.
	Remaining int
	// Limit is RateLimit-Limit: the size of the window; -1 when absent.
	Limit int
	// Reset is when the window resets, from RateLimit-Reset; zero when absent.
	Reset time.Time
}

// WithResponse makes a call fill r with what its answer said: status, rate-limit headers
// and request id. It is filled on failure too, when an answer arrived (a 4xx, a 5xx): an
// error's answer is often the one worth a request id. When a call sends several requests
// (retries, the pages of an iterator, a Create that looks its reference up) r describes
// the last. r is written by the calling goroutine's call only; do not share one Response
// between concurrent calls.
func WithResponse(r *Response) RequestOption {
	return func(o *requestOptions) { o.response = r }
}

// capture fills r from an answer, or zeroes it when there was none.
func (r *Response) capture(resp *http.Response, now time.Time) {
	*r = Response{RateLimit: RateLimit{Remaining: -1, Limit: -1}}
	if resp == nil {
		return
	}
	r.StatusCode = resp.StatusCode
	r.Header = resp.Header.Clone()
	if n, ok := headerInt(resp.Header, "RateLimit-Remaining"); ok {
		r.RateLimit.Remaining = n
	}
	if n, ok := headerInt(resp.Header, "RateLimit-Limit"); ok {
		r.RateLimit.Limit = n
	}
	if d, ok := headerSeconds(resp.Header.Get("RateLimit-Reset"), now); ok {
		r.RateLimit.Reset = now.Add(d)
	}
	r.RequestID = requestID(resp.Header)
}

// requestID finds a request-id header. Names are tried in sorted order so that an answer
// with two of them gives the same id every time.
func requestID(h http.Header) string {
	names := make([]string, 0, len(h))
	for name := range h {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		n := strings.ToLower(name)
		if n == "request-id" || strings.HasSuffix(n, "-request-id") || strings.HasSuffix(n, "-requestid") {
			if v := strings.TrimSpace(h.Get(name)); v != "" {
				return v
			}
		}
	}
	return ""
}
