package redact

import (
	"context"
	"strings"
)

// maxLayers is how many layers of encoding are decoded: a JSON escape of an HTML reference
// of a percent-escape is three, and a JSON body that carries such a text in a string
// (the error's message, which the SDK decodes from the body) is a fourth. A server that
// echoes a request rarely encodes it more than twice; four leaves a margin, and a layer
// costs one reading of a text no longer than the one before.
const maxLayers = 4

// chunk is how many bytes a pass reads between two looks at the context.
const chunk = 64 << 10

// pass is one redaction's context, looked at between chunks, and its count of the bytes its
// passes read (the tests bound it: the work is linear in the text).
type pass struct {
	ctx  context.Context
	read int
}

// progress follows one loop of a pass over a text: at(i) when its index is i.
type progress struct {
	p    *pass
	done int // the index counted so far
}

// at counts the loop up to index i, and looks at the context once a chunk.
func (g *progress) at(i int) error {
	if i-g.done < chunk {
		return nil
	}
	g.p.read += i - g.done
	g.done = i
	return g.p.ctx.Err()
}

// end counts the loop up to its last index, i.
func (g *progress) end(i int) { g.p.read += i - g.done }

// nonASCII stands for a decoded character beyond ASCII, which no secret holds.
const nonASCII = 0x80

// escapeStart marks the bytes that may start an escape.
var escapeStart = [256]bool{'\\': true, '&': true, '%': true}

// escape is one escape a layer decoded: the character at out in the layer was spelt by
// the bytes [in, end) of the text below. int32 keeps a layer of a crafted text, an escape
// every few bytes, small: texts the redactor reads are far shorter than 2 GiB.
type escape struct{ out, in, end int32 }

// offsets maps places in a layer back to the text below it.
type offsets struct {
	escapes []escape // in order
}

// cursor maps places of a layer back to the text below, in increasing order: the places
// of spans in order are, so mapping them all costs one walk of the escapes.
type cursor struct {
	m    *offsets
	next int // the first escape after the last place mapped
}

// at returns where the character at p of the layer starts in the text below (p may be
// the layer's length: then the text's length). p must not decrease from call to call.
func (c *cursor) at(p int) int {
	es := c.m.escapes
	for c.next < len(es) && int(es[c.next].out) <= p {
		c.next++
	}
	if c.next == 0 {
		return p
	}
	e := es[c.next-1]
	if int(e.out) == p {
		return int(e.in)
	}
	return int(e.end) + (p - int(e.out) - 1)
}

// decodeLayer undoes one layer of escapes in s. It returns the layer and its offsets, or
// ok false when s holds no escape (the layer would be s itself).
func decodeLayer(p *pass, s string) (layer string, m *offsets, ok bool, err error) {
	var out strings.Builder
	m = &offsets{}
	last, g := 0, progress{p: p}
	defer func() { g.end(len(s)) }()
	for i := 0; i < len(s); {
		if err := g.at(i); err != nil {
			return "", nil, false, err
		}
		if !escapeStart[s[i]] {
			i++
			continue
		}
		c, n := readEscape(s, i)
		if n == 0 {
			i++
			continue
		}
		if out.Cap() == 0 {
			out.Grow(len(s))
			m.escapes = make([]escape, 0, escapeStarts(s[i:]))
		}
		out.WriteString(s[last:i])
		m.escapes = append(m.escapes, escape{out: int32(out.Len()), in: int32(i), end: int32(i + n)})
		out.WriteByte(c)
		i += n
		last = i
	}
	if out.Cap() == 0 {
		return s, nil, false, nil
	}
	out.WriteString(s[last:])
	return out.String(), m, true, nil
}

// escapeStarts counts the bytes of s that may start an escape: as many escapes at most.
func escapeStarts(s string) int {
	return strings.Count(s, "\\") + strings.Count(s, "&") + strings.Count(s, "%")
}

// readEscape reads the escape that starts at s[i], one layer deep, and returns its
// character and length; n is 0 when s[i] starts none. The digits and the ';' of an HTML
// reference may be escaped themselves (escapedUnit), and so may the 'u' of a JSON escape
// after a backslash (startsUEscape): text that escapes an escape's characters but not its
// first reads as written (&#9&#X35;&#59; is &#95;, "_"), not as a shorter escape that
// happens to be complete (&#9, a tab) and the rest apart.
func readEscape(s string, i int) (c byte, n int) {
	switch s[i] {
	case '\\':
		return jsonEscape(s, i)
	case '&':
		return readEntity(s, i, escapedUnit)
	}
	return readPlainEscape(s, i)
}

// readPlainEscape reads the escape at s[i] with its characters as they are.
func readPlainEscape(s string, i int) (c byte, n int) {
	switch s[i] {
	case '\\':
		return jsonEscapeAt(s, i)
	case '%':
		if i+2 < len(s) && HexVal(s[i+1]) >= 0 && HexVal(s[i+2]) >= 0 {
			return byte(HexVal(s[i+1])<<4 | HexVal(s[i+2])), 3
		}
	case '&':
		return readEntity(s, i, plainUnit)
	}
	return 0, 0
}

// unitReader reads the character at s[j] and the number of bytes it spans; n is 0 at the
// end of s.
type unitReader func(s string, j int) (c byte, n int)

// plainUnit reads the byte at s[j].
func plainUnit(s string, j int) (byte, int) {
	if j >= len(s) {
		return 0, 0
	}
	return s[j], 1
}

// escapedUnit reads the character at s[j], undoing an escape there (read plainly: a look
// ahead costs a few escapes' length, whatever follows).
func escapedUnit(s string, j int) (byte, int) {
	if j < len(s) && escapeStart[s[j]] {
		if c, n := readPlainEscape(s, j); n > 0 {
			return c, n
		}
	}
	return plainUnit(s, j)
}

// jsonEscapes are the characters of JSON's short escapes (\/ \\ \" and the control
// characters' \b \f \n \r \t).
var jsonEscapes = [256]byte{'/': '/', '\\': '\\', '"': '"', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// jsonEscape reads a JSON escape at s[i]: a short one, or \uXXXX (a character beyond
// ASCII reads as nonASCII). Every escape is read whole, so that a base64 run after one (a
// token echoed wrapped with "\n") never takes its letter: the run's mark leaves the escape
// intact, and a redacted JSON body still parses.
func jsonEscape(s string, i int) (byte, int) {
	if i+1 < len(s) && s[i+1] == '\\' && startsUEscape(s, i+1) {
		return 0, 0 // a backslash of its own: see startsUEscape
	}
	return jsonEscapeAt(s, i)
}

// jsonEscapeAt reads the JSON escape at s[i] as it is.
func jsonEscapeAt(s string, i int) (byte, int) {
	if i+1 >= len(s) {
		return 0, 0
	}
	if c := jsonEscapes[s[i+1]]; c != 0 {
		return c, 2
	}
	if s[i+1] != 'u' && s[i+1] != 'U' || i+6 > len(s) {
		return 0, 0
	}
	v := 0
	for _, h := range []byte(s[i+2 : i+6]) {
		d := HexVal(h)
		if d < 0 {
			return 0, 0
		}
		v = v<<4 | d
	}
	return byte(min(v, nonASCII)), 6
}

// startsUEscape reports whether the escape at s[j] and the characters after it spell a
// \uXXXX escape of the next layer: a 'u' escaped (\u0075), then four hex digits, each
// plain or escaped. Text that escapes every character of an escape but its backslash
// (\\u0075\u00300\u0033\u0034 for \u0034) then reads as it was written, the backslash
// on its own, instead of as JSON's escaped backslash followed by "u0075".
func startsUEscape(s string, j int) bool {
	c, n := jsonEscapeAt(s, j)
	if n == 0 || c != 'u' && c != 'U' {
		return false
	}
	for j, k := j+n, 0; k < 4; k++ {
		d, n := escapedUnit(s, j)
		if n == 0 || HexVal(d) < 0 {
			return false
		}
		j += n
	}
	return true
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

// namedEntities are the HTML named character references of the characters a key or a
// base64 token can hold that have names (letters and digits have none).
var namedEntities = map[string]byte{
	"sol": '/', "plus": '+', "equals": '=', "lowbar": '_', "UnderBar": '_', "colon": ':',
	"period": '.', "commat": '@', "hyphen": '-', "dash": '-', "amp": '&', "num": '#',
	"bsol": '\\', "percnt": '%', "quot": '"', "semi": ';',
}

// longestEntityName bounds the letters read for a name.
const longestEntityName = 8

// readEntity reads an HTML character reference at s[i]: "&#55;", "&#x37;", "&#X0037"
// (the ';' is optional, as browsers allow), or a name from namedEntities with its ';'.
// The characters after the '&' are read with unit.
func readEntity(s string, i int, unit unitReader) (byte, int) {
	j := i + 1
	c, n := unit(s, j)
	if n == 0 || c != '#' {
		return readNamedEntity(s, i)
	}
	j += n
	base := 10
	if c, n := unit(s, j); n > 0 && (c == 'x' || c == 'X') {
		base = 16
		j += n
	}
	v, digits := 0, 0
	for digits < 8 {
		c, n := unit(s, j)
		d := HexVal(c)
		// Stop before a digit that would leave ASCII: a secret is printable ASCII, and the
		// digits that follow may be the next character's own escape (`&#x31` then `&#X37;`
		// spells "17", not U+0317, when a ';' is left out).
		if n == 0 || d < 0 || (base == 10 && d > 9) || v*base+d >= nonASCII {
			break
		}
		v = v*base + d
		digits++
		j += n
	}
	if digits == 0 {
		return 0, 0
	}
	if c, n := unit(s, j); n > 0 && c == ';' {
		j += n
	}
	return byte(v), j - i
}

// readNamedEntity reads a named reference at s[i]: letters up to ';'.
func readNamedEntity(s string, i int) (byte, int) {
	end := i + 1
	for end < len(s) && end-i <= longestEntityName && isLetter(s[end]) {
		end++
	}
	if end < len(s) && s[end] == ';' {
		if v, known := namedEntities[s[i+1:end]]; known {
			return v, end + 1 - i
		}
	}
	return 0, 0
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
