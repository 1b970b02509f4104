// Package redact finds a client's credential in text the client hands back, in every form
// a server plausibly echoes it in, and replaces it with [Redacted] (see [Redactor] for the
// forms). It is the SDK's machinery, kept apart from the client so that it reads alone;
// the SDK applies it to its own types (errors, headers, responses) in redact.go at the root,
// whose tests pin the redaction end to end, through a client, and fuzz it.
package redact

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
)

// Redacted replaces a credential wherever the client hands text back.
const Redacted = "[REDACTED]"

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

// Redactor finds the client's credential in text the client hands back (error bodies,
// messages and headers, DecodeError bodies, transport errors, WithResponse, logs), in every
// form a server plausibly echoes it in. What a server can echo is what it was sent: the
// key (in the Basic token, or in a URL or body when a caller put it there) and the token.
// It can pass either on as it is, transcoded into another text encoding, or re-encoded into
// bytes-as-text. The forms covered, and so removed wherever they appear:
//
//  1. The key and the token as sent, and base64 and base64url of the key and of
//     "email:key", padded or not: the encodings of bytes as text that HTTP uses.
//  2. Each of those with any of its characters escaped, up to redactDepth layers deep, as
//     JSON (\u0037, \/), HTML (&#55; &#x37; &#X0037 and the named &sol; &plus; &equals; …
//     with zero-padded digits) and URLs (%37) escape them: the text encodings a body, a
//     header or an echoed URL is written in. Matching runs character by character, not on a
//     decoded copy, so the offsets of the original text are kept and only the secret goes.
//  3. Any base64 run of the key's bits, wherever it starts: a base64 text's characters
//     depend on where the key falls in its 3-byte groups, so for each of the three
//     alignments and both alphabets the characters that only the key's bytes decide are
//     the key's core. A run of text in the base64 alphabet that holds 5 characters of a
//     core (3.75 bytes of the key), or is a piece of one at least 4 long but for a character
//     at either end (which carries bits of the bytes around the key), is removed whole: so
//     is a token wrapped across lines (its tail, cut at a 4-character boundary, decodes to
//     the key), cut in pieces, or cut short of its padding. A piece shorter than that holds
//     at most 3 bytes of the key.
//  4. Hex of the key, in lower, upper or mixed case: how bytes are dumped. A dump whose
//     byte pairs are spread out (hex.Dump, xxd: "6b 51 2f", "6b51 2f39", "6b:51") is read
//     as bytes, and a run of pairs that holds 4 bytes of the key in a row goes whole; so
//     does any piece of 8 characters of the key as it is, such as a dump's text column
//     ("|kQ/9+zX=vb_Lm-0p|").
//  5. Any of the above in a header name, whatever its case: Go canonicalizes names.
//
// Beyond these, an echo would be the server transforming the secret (hashing, encrypting,
// compressing, or an encoding the client did not send and no text format uses on it), not
// echoing it: there is nothing of the key to find.
type Redactor struct {
	// secrets are matched in every escaped form (2); folded (held in lower case) also
	// ignore case (4); in header names, every secret ignores case (5).
	secrets, folded []string
	// grams holds every piece of 4 to gramLen characters of the key's base64 cores (3).
	grams map[string]struct{}
	// key is the key itself, for its pieces (4); keyGrams holds every 4 bytes of it in a
	// row, keyPieces every keyPieceLen.
	key                 string
	keyGrams, keyPieces map[string]struct{}
}

// keyPieceLen is the length of a piece of the key, as it is, that is Redacted wherever it
// appears: a dump's text column cuts the key in lines of 16.
const keyPieceLen = 8

// gramLen is the length of a base64 run of the key's core that removes the run it is in:
// five characters carry 3.75 bytes of the key, and a chance match of five random
// characters with the few hundred pieces of a key is some 10⁻⁷.
const gramLen = 5

// New returns the Redactor of a client's credential (see Redactor for the forms).
func New(email, key string) *Redactor {
	userPass := email + ":" + key
	r := &Redactor{grams: make(map[string]struct{})}
	// Longest first: where a token starts, the whole of it goes, padding included, not its
	// key's core alone.
	padded := []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding}
	for _, enc := range padded {
		r.secrets = append(r.secrets, enc.EncodeToString([]byte(userPass)))
	}
	r.secrets = append(r.secrets, key)
	for _, enc := range padded {
		r.secrets = append(r.secrets, enc.EncodeToString([]byte(key)))
	}
	for _, enc := range padded[2:] {
		for align := range 3 {
			core := base64Core(enc, key, align)
			if len(core) >= gramLen {
				r.secrets = append(r.secrets, core)
			}
			for n := 4; n <= gramLen; n++ {
				for i := 0; i+n <= len(core); i++ {
					r.grams[core[i:i+n]] = struct{}{}
				}
			}
		}
	}
	r.secrets = dedupe(r.secrets) // unpadded forms equal padded ones at some lengths
	r.folded = []string{hex.EncodeToString([]byte(key))}
	r.key, r.keyGrams, r.keyPieces = key, make(map[string]struct{}), make(map[string]struct{})
	for i := 0; i+4 <= len(key); i++ {
		r.keyGrams[key[i:i+4]] = struct{}{}
	}
	for i := 0; i+keyPieceLen <= len(key); i++ {
		r.keyPieces[key[i:i+keyPieceLen]] = struct{}{}
	}
	return r
}

// dedupe drops the repeats of a list, keeping its order.
func dedupe(list []string) []string {
	var out []string
	for _, s := range list {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// base64Core returns the characters of the base64 of key, preceded by align other bytes,
// that the key's bytes alone decide: the first and last characters of a run also carry
// bits of the bytes around it.
func base64Core(enc *base64.Encoding, key string, align int) string {
	full := enc.EncodeToString(append(make([]byte, align), key...))
	first := (8*align + 5) / 6         // the first character whose bits all lie in the key
	last := 8 * (align + len(key)) / 6 // one past the last such character
	if first >= last {
		return ""
	}
	return full[first:last]
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

// jsonEscape reads the rest of a JSON escape after its backslash: \/, \\, \", the control
// characters' \b \f \n \r \t, or \uXXXX (a character beyond ASCII reads as 0x80, which
// no secret holds). Every escape is read whole, so that a base64 run after one (a token
// echoed wrapped with "\n") never takes its letter: the run's mark leaves the escape
// intact, and a redacted JSON body still parses.
func jsonEscape(next func() (byte, bool)) (byte, bool) {
	c1, ok := next()
	if !ok {
		return 0, false
	}
	switch c1 {
	case '/', '\\', '"':
		return c1, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case 'u', 'U':
		if v, ok := readHex(next, 4); ok {
			return byte(min(v, 0x80)), true
		}
	}
	return 0, false
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
		if v, ok := jsonEscape(next); ok {
			return v, pos - j, true
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
		d := HexVal(c)
		if d < 0 {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

// HexVal is the value of a hex digit, -1 for another byte. The root package's path
// checks read escapes with it too.
func HexVal(c byte) int {
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
		*pos = start
		return readNamedEntity(s, pos)
	}
	base := 10
	mark := *pos
	if c, ok := next(); ok && (c == 'x' || c == 'X') {
		base = 16
	} else {
		*pos = mark
	}
	v, digits := readEntityDigits(pos, next, base)
	if digits == 0 || v >= 0x80 {
		return 0, false
	}
	mark = *pos
	if c, ok := next(); !ok || c != ';' {
		*pos = mark
	}
	return byte(v), true
}

// readNamedEntity reads a named reference at s[*pos]: letters up to ';'. Names are plain
// in every encoding seen.
func readNamedEntity(s string, pos *int) (byte, bool) {
	start, end := *pos, *pos
	for end < len(s) && end-start < 10 && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z') {
		end++
	}
	if v, known := namedEntities[s[start:end]]; known && end < len(s) && s[end] == ';' {
		*pos = end + 1
		return v, true
	}
	return 0, false
}

// readEntityDigits reads up to 8 digits of a numeric reference in base (10 or 16), zero
// padding included.
func readEntityDigits(pos *int, next func() (byte, bool), base int) (v, digits int) {
	for digits < 8 {
		mark := *pos
		c, ok := next()
		d := HexVal(c)
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
	return v, digits
}

// matchAt reports where a secret that begins at s[i] ends, in any encoding and any
// reading of it (see units); with fold, in any case (secret is then in lower case). The
// search is depth-first; it gives up after maxMatchSteps readings, which honest text never
// approaches.
func matchAt(s string, i int, secret string, fold bool) (int, bool) {
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
			if c := u.c; c != secret[k] && (!fold || lower(c) != lower(secret[k])) {
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

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// String returns s with every secret, in any form, replaced by [REDACTED].
func (r *Redactor) String(s string) string { return r.redact(s, false) }

// redact removes the secrets from s (ignoring case when foldAll) and then the base64 runs
// of the key.
func (r *Redactor) redact(s string, foldAll bool) string {
	if r == nil || s == "" {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' && c != '&' && c != '%' && !r.startsSecret(c, foldAll) {
			continue
		}
		// Read the first character once for all secrets: most escape starts spell none.
		var buf [16]unit
		first := units(s, i, redactDepth, buf[:0])
		if !slices.ContainsFunc(first, func(u unit) bool { return r.startsSecret(u.c, foldAll) }) {
			continue
		}
		if end, ok := r.matchAny(s, i, foldAll); ok {
			b.WriteString(s[last:i])
			b.WriteString(Redacted)
			last = end
			i = end - 1
		}
	}
	if last > 0 {
		b.WriteString(s[last:])
		s = b.String()
	}
	return r.removeKeyPieces(r.hexRuns(r.base64Runs(s)))
}

// removeKeyPieces removes every piece of keyPieceLen characters or more of the key as it
// is.
func (r *Redactor) removeKeyPieces(s string) string {
	if len(r.keyPieces) == 0 || len(s) < keyPieceLen {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+keyPieceLen <= len(s); i++ {
		if _, ok := r.keyPieces[s[i:i+keyPieceLen]]; !ok {
			continue
		}
		j := i + keyPieceLen
		for j < len(s) && strings.Contains(r.key, s[i:j+1]) {
			j++
		}
		b.WriteString(s[last:i])
		b.WriteString(Redacted)
		last, i = j, j-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// hexRuns removes every run of hex byte pairs (contiguous, or apart by up to two spaces, a
// colon or a hyphen, as dumps print them) that decodes, read from either of its first two
// digits, to 4 bytes of the key in a row.
func (r *Redactor) hexRuns(s string) string {
	if len(r.keyGrams) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+8 <= len(s); {
		if HexVal(s[i]) < 0 {
			i++
			continue
		}
		end, carries := r.hexRunAt(s, i)
		if carries {
			b.WriteString(s[last:i])
			b.WriteString(Redacted)
			last = end
		}
		i = max(end, i+1)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// hexRunAt reads the run of hex pairs that starts at s[i], at both alignments, and reports
// where the longer reading ends and whether either holds 4 bytes of the key in a row.
func (r *Redactor) hexRunAt(s string, i int) (end int, carries bool) {
	end = i
	for align := range 2 {
		bs, j := hexPairs(s, i+align)
		if len(bs) > 0 {
			end = max(end, j)
		}
		carries = carries || r.holdsKeyGram(bs)
	}
	return end, carries
}

// hexPairs reads the hex byte pairs from s[j] on, across the separators dumps print
// between them, and returns the bytes and where the last pair ends.
func hexPairs(s string, j int) ([]byte, int) {
	var bs []byte
	for isHexPair(s, j) {
		bs = append(bs, byte(HexVal(s[j])<<4|HexVal(s[j+1])))
		j += 2
		k := j
		for k < len(s) && k-j < 2 && (s[k] == ' ' || s[k] == ':' || s[k] == '-') {
			k++
		}
		if isHexPair(s, k) {
			j = k
		}
	}
	return bs, j
}

// isHexPair reports whether s[j:j+2] are two hex digits.
func isHexPair(s string, j int) bool {
	return j+1 < len(s) && HexVal(s[j]) >= 0 && HexVal(s[j+1]) >= 0
}

// holdsKeyGram reports whether bs holds 4 bytes of the key in a row.
func (r *Redactor) holdsKeyGram(bs []byte) bool {
	for n := 0; n+4 <= len(bs); n++ {
		if _, ok := r.keyGrams[string(bs[n:n+4])]; ok {
			return true
		}
	}
	return false
}

// matchAny reports where the first secret that begins at s[i] ends.
func (r *Redactor) matchAny(s string, i int, foldAll bool) (int, bool) {
	for _, secret := range r.secrets {
		if end, ok := matchAt(s, i, secret, foldAll); ok {
			return end, true
		}
	}
	for _, secret := range r.folded {
		if end, ok := matchAt(s, i, secret, true); ok {
			return end, true
		}
	}
	return 0, false
}

func (r *Redactor) startsSecret(c byte, foldAll bool) bool {
	for _, s := range r.secrets {
		if s[0] == c || (foldAll && lower(s[0]) == lower(c)) {
			return true
		}
	}
	for _, s := range r.folded {
		if s[0] == lower(c) {
			return true
		}
	}
	return false
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// base64Runs removes every run of base64 characters that holds gramLen characters of the
// key's base64, or is wholly a piece of it (form 3 of Redactor). Runs are read with one
// layer of escapes undone per character (decodeUnit), so that "\/" or "%2B" inside a token
// does not cut it in pieces too short to be seen.
func (r *Redactor) base64Runs(s string) string {
	if len(r.grams) == 0 {
		return s
	}
	var b strings.Builder
	var run []byte // the run's characters, decoded
	last, start := 0, 0
	flush := func(end int) {
		if r.keyRun(run) {
			b.WriteString(s[last:start])
			b.WriteString(Redacted)
			last = end
		}
		run = run[:0]
	}
	for j := 0; j < len(s); {
		c, n, _ := decodeUnit(s, j, redactDepth)
		if !isBase64Char(c) {
			flush(j)
			j += n
			start = j
			continue
		}
		run = append(run, c)
		j += n
	}
	flush(len(s))
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// keyRun reports whether a run of base64 characters carries the key: it holds gramLen
// characters of a core, or is a piece of one at least 4 long but for one character at
// either end (a piece cut from a wrapped token keeps the character it shares with the
// bytes before or after the key).
func (r *Redactor) keyRun(run []byte) bool {
	for i := 0; i+gramLen <= len(run); i++ {
		if _, ok := r.grams[string(run[i:i+gramLen])]; ok {
			return true
		}
	}
	if len(run) > gramLen+2 {
		return false
	}
	for i := 0; i <= 1; i++ {
		for j := len(run); j >= len(run)-1; j-- {
			if j-i >= 4 && j-i <= gramLen {
				if _, ok := r.grams[string(run[i:j])]; ok {
					return true
				}
			}
		}
	}
	return false
}

// Bytes is String for a byte slice; it returns b itself when nothing is found.
func (r *Redactor) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return b
	}
	s := r.String(string(b))
	if len(s) == len(b) && s == string(b) {
		return b
	}
	return []byte(s)
}

// Header returns a copy of h with every secret removed from names and values.
func (r *Redactor) Header(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		rv := make([]string, len(vs))
		for i, v := range vs {
			rv[i] = r.String(v)
		}
		// Go changes a name's case: match in any case. Two names Redacted alike keep both
		// their values.
		name := r.redact(k, true)
		out[name] = append(out[name], rv...)
	}
	return out
}
