package redact

// gramSet holds short strings (up to 7 bytes) packed into integers, behind a bit filter
// that answers most look-ups of text that holds none without touching the map.
type gramSet struct {
	filter []uint64 // filterBits bits
	keys   map[uint64]struct{}
}

const filterBits = 1 << 16

func newGramSet() *gramSet {
	return &gramSet{filter: make([]uint64, filterBits/64), keys: make(map[uint64]struct{})}
}

// pack is s (at most 7 bytes) as an integer, its length in the top byte.
func pack(s string) uint64 {
	k := uint64(len(s)) << 56
	for i := 0; i < len(s); i++ {
		k |= uint64(s[i]) << (8 * i)
	}
	return k
}

func filterBit(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> 48 }

func (g *gramSet) add(s string) {
	k := pack(s)
	b := filterBit(k)
	g.filter[b/64] |= 1 << (b % 64)
	g.keys[k] = struct{}{}
}

// empty reports a set with nothing in it; a nil set is empty.
func (g *gramSet) empty() bool { return g == nil || len(g.keys) == 0 }

func (g *gramSet) hasPacked(k uint64) bool {
	if g.empty() {
		return false
	}
	b := filterBit(k)
	if g.filter[b/64]&(1<<(b%64)) == 0 {
		return false
	}
	_, ok := g.keys[k]
	return ok
}

func (g *gramSet) has(s string) bool { return g.hasPacked(pack(s)) }

// base64Chars are the characters of both base64 alphabets.
var base64Chars = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_") {
		t[c] = true
	}
	return t
}()

// base64Runs appends to spans every run of base64 characters of s (a fully decoded layer)
// that carries the key (form 3 of Redactor; see keyRun).
func (r *Redactor) base64Runs(p *pass, s string, spans []span) ([]span, error) {
	if r.grams.empty() {
		return spans, nil
	}
	g := progress{p: p}
	defer func() { g.end(len(s)) }()
	for i := 0; i < len(s); {
		if err := g.at(i); err != nil {
			return spans, err
		}
		if !base64Chars[s[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && base64Chars[s[j]] {
			j++
		}
		if r.keyRun(s[i:j]) {
			spans = addSpan(spans, span{i, j})
		}
		i = j
	}
	return spans, nil
}

// keyRun reports whether a run of base64 characters carries the key: it holds gramLen
// characters of a core, or is a piece of one at least 4 long but for one character at
// either end (a piece cut from a wrapped token keeps the character it shares with the
// bytes before or after the key).
func (r *Redactor) keyRun(run string) bool {
	const mask = 1<<(8*gramLen) - 1
	var window uint64 // the last gramLen characters, the first lowest, as pack holds them
	for i := 0; i < len(run); i++ {
		window = window>>8 | uint64(run[i])<<(8*(gramLen-1))
		if i >= gramLen-1 && r.grams.hasPacked(gramLen<<56|window&mask) {
			return true
		}
	}
	if len(run) > gramLen+2 {
		return false
	}
	for i := 0; i <= 1; i++ {
		for j := len(run); j >= len(run)-1; j-- {
			if j-i >= 4 && j-i <= gramLen && r.grams.has(run[i:j]) {
				return true
			}
		}
	}
	return false
}

// hexRuns appends to spans every run of hex byte pairs of s (contiguous, or apart by up to
// two spaces, a colon or a hyphen, as dumps print them) that decodes, read from either of
// its first two digits, to 4 bytes of the key in a row.
func (r *Redactor) hexRuns(p *pass, s string, spans []span) ([]span, error) {
	if r.keyGrams.empty() {
		return spans, nil
	}
	g := progress{p: p}
	defer func() { g.end(len(s)) }()
	for i := 0; i+8 <= len(s); {
		if err := g.at(i); err != nil {
			return spans, err
		}
		if hexVal[s[i]] < 0 {
			i++
			continue
		}
		// A stretch of hex digits and separators with fewer than 8 digits holds fewer
		// than 4 pairs: most words of a text are such stretches.
		if end, digits := hexStretch(s, i); digits < 8 {
			i = end
			continue
		}
		end, carries := r.hexRunAt(s, i)
		if carries {
			spans = addSpan(spans, span{i, end})
		}
		i = max(end, i+1)
	}
	return spans, nil
}

// hexStretch returns where the stretch of hex digits and dump separators that starts at
// s[i] ends, and how many digits it holds.
func hexStretch(s string, i int) (end, digits int) {
	for end = i; end < len(s); end++ {
		switch c := s[end]; {
		case hexVal[c] >= 0:
			digits++
		case c == ' ' || c == ':' || c == '-':
		default:
			return end, digits
		}
	}
	return end, digits
}

// hexRunAt reads the run of hex pairs that starts at s[i], at both alignments, and reports
// where the longer reading ends and whether either holds 4 bytes of the key in a row.
func (r *Redactor) hexRunAt(s string, i int) (end int, carries bool) {
	end = i
	for align := range 2 {
		j, holds := r.hexPairs(s, i+align)
		if j > i+align {
			end = max(end, j)
		}
		carries = carries || holds
	}
	return end, carries
}

// hexPairs reads the hex byte pairs from s[j] on, across the separators dumps print
// between them, and returns where the last pair ends and whether 4 of the bytes in a row
// are 4 bytes of the key in a row.
func (r *Redactor) hexPairs(s string, j int) (end int, holds bool) {
	var window uint64 // the last 4 bytes read
	n := 0
	end = j
	for isHexPair(s, j) {
		window = (window<<8 | uint64(hexVal[s[j]])<<4 | uint64(hexVal[s[j+1]])) & 0xFFFFFFFF
		if n++; n >= 4 && !holds {
			holds = r.keyGrams.hasPacked(4<<56 | bswap32(window))
		}
		j += 2
		end = j
		k := j
		for k < len(s) && k-j < 2 && (s[k] == ' ' || s[k] == ':' || s[k] == '-') {
			k++
		}
		if isHexPair(s, k) {
			j = k
		}
	}
	return end, holds
}

// bswap32 turns a window read first byte highest into pack's order (first byte lowest).
func bswap32(w uint64) uint64 {
	return w>>24&0xFF | w>>8&0xFF00 | w<<8&0xFF0000 | w<<24&0xFF000000
}

// isHexPair reports whether s[j:j+2] are two hex digits.
func isHexPair(s string, j int) bool {
	return j+1 < len(s) && hexVal[s[j]] >= 0 && hexVal[s[j+1]] >= 0
}

// hexVal is HexVal as a table.
var hexVal = func() (t [256]int8) {
	for c := range t {
		t[c] = int8(HexVal(byte(c)))
	}
	return t
}()
