package escrow

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
)

// redacted replaces a credential wherever the client hands text back.
const redacted = "[REDACTED]"

// redactDepth is how many layers of encoding one character of a secret may hide under: a
// JSON escape of an HTML entity of a percent-escape is three. A server that echoes a request
// rarely encodes it more than twice; three leaves a margin and keeps the cost linear.
const redactDepth = 3

// namedEntities are the HTML named character references of the characters a key or a
// base64 token can hold that have names (letters and digits have none).
var namedEntities = map[string]byte{
	"sol": '/', "plus": '+', "equals": '=', "lowbar": '_', "UnderBar": '_', "colon": ':',
	"period": '.', "commat": '@', "hyphen": '-', "dash": '-', "amp": '&', "num": '#',
	"bsol": '\\', "percnt": '%', "quot": '"', "semi": ';',
}

// redactor finds the client's secrets (the API key and the Basic token) in text where each
// of their characters may appear raw or encoded: as a JSON escape (\u0037, \/), an HTML
// character reference (&#55; &#x37; &#X0037 &sol;), or a percent-escape (%37), nested up to
// redactDepth layers. Matching character by character, not on a decoded copy, keeps the
// offsets of the original text, so only the secret is replaced and the rest stays readable.
type redactor struct {
	secrets []string
}

// decodeUnit reads one character of s at j, undoing up to depth layers of encoding, and
// returns it with the number of bytes of s it spans. The syntax characters of an escape
// (the backslash, '&', '#', digits, '%') may themselves be encoded one layer down.
func decodeUnit(s string, j, depth int) (c byte, n int, ok bool) {
	if j >= len(s) {
		return 0, 0, false
	}
	if depth == 0 {
		return s[j], 1, true
	}
	c0, n0, ok := decodeUnit(s, j, depth-1)
	if !ok {
		return 0, 0, false
	}
	if v, n, ok := escapeAt(s, j, c0, n0, depth); ok {
		return v, n, true
	}
	return c0, n0, true
}

// unit is one reading of a character: its value and the bytes of the text it spans.
type unit struct {
	c byte
	n int
}

// units appends every reading of the character at s[j] with up to depth layers of
// encoding. Text can be read more than one way: in `\u0031` the first backslash may escape
// the second (JSON) or start `1` whose 'u' is itself escaped. decodeUnit picks one;
// matching tries them all, so that no reading that spells a secret is missed.
func units(s string, j, depth int, out []unit) []unit {
	if j >= len(s) {
		return out
	}
	if depth == 0 {
		return append(out, unit{s[j], 1})
	}
	start := len(out)
	out = units(s, j, depth-1, out)
	for i, end := start, len(out); i < end; i++ {
		if v, n, ok := escapeAt(s, j, out[i].c, out[i].n, depth); ok {
			out = append(out, unit{v, n})
		}
	}
	return out
}

// escapeAt reads an escape whose first syntax character, c0, spans s[j:j+n0]; the rest
// of its syntax characters are read one layer down.
func escapeAt(s string, j int, c0 byte, n0, depth int) (byte, int, bool) {
	pos := j + n0
	next := func() (byte, bool) {
		c, n, ok := decodeUnit(s, pos, depth-1)
		if ok {
			pos += n
		}
		return c, ok
	}
	switch c0 {
	case '\\':
		c1, ok := next()
		if !ok {
			break
		}
		switch c1 {
		case '/', '\\', '"':
			return c1, pos - j, true
		case 'u', 'U':
			if v, ok := readHex(next, 4); ok && v < 0x80 {
				return byte(v), pos - j, true
			}
		}
	case '%':
		if v, ok := readHex(next, 2); ok {
			return byte(v), pos - j, true
		}
	case '&':
		if v, ok := readEntity(s, &pos, next); ok {
			return v, pos - j, true
		}
	}
	return 0, 0, false
}

// readHex reads exactly n hex digits with next.
func readHex(next func() (byte, bool), n int) (int, bool) {
	v := 0
	for i := 0; i < n; i++ {
		c, ok := next()
		if !ok {
			return 0, false
		}
		d := hexVal(c)
		if d < 0 {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// readEntity reads the rest of an HTML character reference after '&': "#55;", "#x37;",
// "#X0037" (the ';' is optional, as browsers allow), or a name from namedEntities with its ';'.
func readEntity(s string, pos *int, next func() (byte, bool)) (byte, bool) {
	start := *pos
	c, ok := next()
	if !ok {
		return 0, false
	}
	if c != '#' {
		// A named reference: letters up to ';'. Names are plain in every encoding seen.
		*pos = start
		end := start
		for end < len(s) && end-start < 10 && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z') {
			end++
		}
		if v, known := namedEntities[s[start:end]]; known && end < len(s) && s[end] == ';' {
			*pos = end + 1
			return v, true
		}
		return 0, false
	}
	base := 10
	mark := *pos
	if c, ok := next(); ok && (c == 'x' || c == 'X') {
		base = 16
	} else {
		*pos = mark
	}
	v, digits := 0, 0
	for digits < 8 {
		mark = *pos
		c, ok := next()
		d := hexVal(c)
		if !ok || d < 0 || (base == 10 && d > 9) {
			*pos = mark
			break
		}
		// Stop before a digit that would leave ASCII: a secret is printable ASCII, and the
		// digits that follow may be the next character's own escape (`&#x31` then `&#X37;`
		// spells "17", not U+0317, when a ';' is left out).
		if v*base+d >= 0x80 {
			*pos = mark
			break
		}
		v = v*base + d
		digits++
	}
	if digits == 0 || v >= 0x80 {
		return 0, false
	}
	mark = *pos
	if c, ok := next(); !ok || c != ';' {
		*pos = mark
	}
	return byte(v), true
}

// matchAt reports where a secret that begins at s[i] ends, in any encoding and any
// reading of it (see units). The search is depth-first; it gives up after maxMatchSteps
// readings, which honest text never approaches.
func matchAt(s string, i int, secret string) (int, bool) {
	steps := 0
	var match func(j, k int) (int, bool)
	match = func(j, k int) (int, bool) {
		if k == len(secret) {
			return j, true
		}
		if steps++; steps > maxMatchSteps {
			return 0, false
		}
		var buf [16]unit // per frame: the frames below reuse none of it
		for _, u := range units(s, j, redactDepth, buf[:0]) {
			if u.c != secret[k] {
				continue
			}
			if end, ok := match(j+u.n, k+1); ok {
				return end, true
			}
		}
		return 0, false
	}
	return match(i, 0)
}

// maxMatchSteps bounds the search of one match.
const maxMatchSteps = 4096

// string returns s with every secret, in any encoding, replaced by [REDACTED].
func (r *redactor) string(s string) string {
	if r == nil || s == "" {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' && c != '&' && c != '%' && !r.startsSecret(c) {
			continue
		}
		// Read the first character once for all secrets: most escape starts spell none.
		var buf [16]unit
		first := units(s, i, redactDepth, buf[:0])
		if !slices.ContainsFunc(first, func(u unit) bool { return r.startsSecret(u.c) }) {
			continue
		}
		for _, secret := range r.secrets {
			if end, ok := matchAt(s, i, secret); ok {
				b.WriteString(s[last:i])
				b.WriteString(redacted)
				last = end
				i = end - 1
				break
			}
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func (r *redactor) startsSecret(c byte) bool {
	for _, s := range r.secrets {
		if s[0] == c {
			return true
		}
	}
	return false
}

// bytes is string for a byte slice; it returns b itself when nothing is found.
func (r *redactor) bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	s := r.string(string(b))
	if len(s) == len(b) && s == string(b) {
		return b
	}
	return []byte(s)
}

// header returns a copy of h with every secret removed from names and values.
func (r *redactor) header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		rv := make([]string, len(vs))
		for i, v := range vs {
			rv[i] = r.string(v)
		}
		out[r.string(k)] = rv
	}
	return out
}

// apiError redacts every string of an error answer, after its body was decoded, so that
// a secret the decoding revealed (a JSON escape turned into the character) is caught too.
func (r *redactor) apiError(e *APIError, fields []FieldError) {
	if e == nil {
		return
	}
	e.Body = r.bytes(e.Body)
	e.Message = r.string(e.Message)
	e.Code = r.string(e.Code)
	e.Header = r.header(e.Header)
	e.Path = r.string(e.Path)
	for i := range fields {
		fields[i].Path = r.string(fields[i].Path)
		for j := range fields[i].Messages {
			fields[i].Messages[j] = r.string(fields[i].Messages[j])
		}
	}
}

// response redacts what WithResponse captured of an answer.
func (r *redactor) response(resp *Response) {
	resp.Header = r.header(resp.Header)
	resp.RequestID = r.string(resp.RequestID)
}

// scrub keeps a credential that some transport echoed out of an error. The error keeps
// answering errors.Is for what it wraps (context.Canceled, say), but no longer unwraps to the
// original, whose text still holds the credential.
func (r *redactor) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := r.string(msg); clean != msg {
		return &scrubbedError{msg: clean, err: err}
	}
	return err
}

// scrubbedError is an error whose text had a credential removed.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }

// Is lets errors.Is(err, context.DeadlineExceeded) and the like see through the scrubbing
// without handing the original error, and its text, to errors.As or errors.Unwrap.
func (e *scrubbedError) Is(target error) bool { return errors.Is(e.err, target) }

// Format prints the scrubbed text under every verb: the default %#v would print the
// wrapped error's fields.
func (e *scrubbedError) Format(f fmt.State, verb rune) { formatText(f, verb, e.msg) }

// formatText prints text for any verb: %q quotes it, %x and %X hex-encode it, the rest
// print it as is.
func formatText(f fmt.State, verb rune, text string) {
	switch verb {
	case 'q':
		fmt.Fprintf(f, "%q", text)
	case 'x':
		fmt.Fprintf(f, "%x", text)
	case 'X':
		fmt.Fprintf(f, "%X", text)
	default:
		_, _ = f.Write([]byte(text))
	}
}

// Format prints a Client as its base URL under every verb: its fields hold the API key and
// the Basic header, and fmt would print them with %s, %q or %x.
func (c Client) Format(f fmt.State, verb rune) {
	u := "<nil>"
	if c.baseURL != nil {
		u = c.baseURL.String()
	}
	formatText(f, verb, "escrow.Client{BaseURL: "+u+"}")
}

// LogValue keeps a Client logged through slog down to its base URL.
func (c *Client) LogValue() slog.Value {
	if c == nil || c.baseURL == nil {
		return slog.StringValue("escrow.Client{}")
	}
	return slog.StringValue("escrow.Client{BaseURL: " + c.baseURL.String() + "}")
}

// Format prints an APIKey with its Key replaced by [REDACTED], under every verb: the full
// key is returned once, at creation, and must not end up in a log by way of %v.
func (k APIKey) Format(f fmt.State, verb rune) {
	shown := k
	if shown.Key != "" {
		shown.Key = redacted
	}
	type plain APIKey // without this method
	switch {
	case verb == 'v' && f.Flag('#'):
		formatText(f, 's', fmt.Sprintf("%#v", plain(shown)))
	case verb == 'v' && f.Flag('+'):
		formatText(f, 's', fmt.Sprintf("%+v", plain(shown)))
	default:
		formatText(f, verb, fmt.Sprintf("%v", plain(shown)))
	}
}

// LogValue logs an APIKey without its Key.
func (k APIKey) LogValue() slog.Value {
	return slog.GroupValue(slog.Int64("id", k.ID), slog.String("name", k.Name), slog.String("last_four_characters", k.LastFourCharacters), slog.Bool("is_active", k.IsActive))
}
