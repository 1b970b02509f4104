package redact

// automaton is an Aho–Corasick automaton of a set of patterns, completed into a table: a
// row per state, a column per byte class, so that reading a byte is one look-up whatever
// the number of patterns. Bytes that no pattern holds share one class.
type automaton struct {
	class   [256]uint8
	width   int      // columns: the classes
	next    []uint32 // next[row+class]: the row of the next state, with accepts; row = state*width
	longest []int32  // the length of the longest pattern that ends at the state, or 0
	fold    bool     // patterns and text are read in lower case
	maxLen  int      // the longest pattern's length
}

// newAutomaton builds the automaton of patterns; with fold it matches them in any case.
func newAutomaton(patterns []string, fold bool) *automaton {
	a := &automaton{width: 1, fold: fold}
	for _, p := range patterns {
		for i := 0; i < len(p); i++ {
			c := a.norm(p[i])
			if a.class[c] == 0 {
				a.class[c] = uint8(a.width)
				a.width++
			}
		}
	}
	if fold {
		for c := 'A'; c <= 'Z'; c++ {
			a.class[c] = a.class[c+'a'-'A']
		}
	}
	a.addState()
	for _, p := range patterns {
		a.insert(p)
	}
	a.complete()
	return a
}

func (a *automaton) norm(c byte) byte {
	if a.fold {
		return lower(c)
	}
	return c
}

// none marks a transition of the trie not yet made.
const none = ^uint32(0)

func (a *automaton) addState() uint32 {
	s := uint32(len(a.longest))
	a.longest = append(a.longest, 0)
	for range a.width {
		a.next = append(a.next, none)
	}
	return s
}

// insert adds p to the trie.
func (a *automaton) insert(p string) {
	if p == "" {
		return
	}
	s := uint32(0)
	for i := 0; i < len(p); i++ {
		k := int(s)*a.width + int(a.class[a.norm(p[i])])
		if a.next[k] == none {
			t := a.addState()
			a.next[k] = t
		}
		s = a.next[k]
	}
	a.longest[s] = max(a.longest[s], int32(len(p)))
	a.maxLen = max(a.maxLen, len(p))
}

// complete turns the trie into the table: breadth first, each state's missing
// transitions are its failure state's, and its longest pattern is at least its failure
// state's (a pattern that is a suffix of another ends with it).
func (a *automaton) complete() {
	fail := make([]uint32, len(a.longest))
	queue := make([]uint32, 0, len(a.longest))
	for c := 0; c < a.width; c++ {
		if t := a.next[c]; t == none {
			a.next[c] = 0
		} else {
			queue = append(queue, t) // fail[t] = 0
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := fail[s]
		a.longest[s] = max(a.longest[s], a.longest[f])
		for c := 0; c < a.width; c++ {
			k := int(s)*a.width + c
			if t := a.next[k]; t == none {
				a.next[k] = a.next[int(f)*a.width+c]
			} else {
				fail[t] = a.next[int(f)*a.width+c]
				queue = append(queue, t)
			}
		}
	}
	// Hold each transition as its target's row, with the accepts bit when a pattern ends
	// there: reading a byte is then one look-up and one addition.
	for k, t := range a.next {
		a.next[k] = t * uint32(a.width)
		if a.longest[t] > 0 {
			a.next[k] |= accepts
		}
	}
}

// accepts marks a transition to a state where a pattern ends.
const accepts = 1 << 31

// find appends to spans the intervals of s[from:to] where patterns match, overlapping
// matches merged, in order, reading from state (0 starts afresh, at from); it returns the
// state it ends in.
func (a *automaton) find(s string, from, to int, state uint32, spans []span) (uint32, []span) {
	for i := from; i < to; i++ {
		state = a.next[int(state)+int(a.class[s[i]])]
		if state&accepts != 0 {
			state &^= accepts
			spans = addSpan(spans, span{i + 1 - int(a.longest[int(state)/a.width]), i + 1})
		}
	}
	return state, spans
}

// findAll appends to spans the matches in the whole of s, looking at ctx between chunks.
func (a *automaton) findAll(p *pass, s string, spans []span) ([]span, error) {
	state := uint32(0)
	for from := 0; from < len(s); from += chunk {
		if err := p.ctx.Err(); err != nil {
			return spans, err
		}
		to := min(from+chunk, len(s))
		state, spans = a.find(s, from, to, state, spans)
		p.read += to - from
	}
	return spans, nil
}

// findNear appends to spans the matches in a layer s that hold a character an escape of m
// spelt: any other match of the layer is a match of the layer below, found there. It reads
// s only around the escapes, a pattern's length either side.
func (a *automaton) findNear(p *pass, s string, m *offsets, spans []span) ([]span, error) {
	reach, read := a.maxLen, 0
	for i := 0; i < len(m.escapes); {
		at := int(m.escapes[i].out)
		from, to := max(at-reach+1, 0), min(at+reach, len(s))
		for i++; i < len(m.escapes) && int(m.escapes[i].out)-reach+1 <= to; i++ {
			to = min(int(m.escapes[i].out)+reach, len(s))
		}
		p.read += to - from
		if read += to - from; read >= chunk {
			if err := p.ctx.Err(); err != nil {
				return spans, err
			}
			read = 0
		}
		_, spans = a.find(s, from, to, 0, spans)
	}
	return spans, nil
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// span is an interval [start, end) of a text to redact.
type span struct{ start, end int }

// addSpan appends sp to spans, in order by start, merged with the last one when they
// overlap. Spans that only touch stay apart: two secrets in a row are two marks.
// A span that starts before the last one (a longer match) swallows every span it
// overlaps.
func addSpan(spans []span, sp span) []span {
	for n := len(spans); n > 0 && sp.start < spans[n-1].end; n-- {
		last := spans[n-1]
		sp = span{min(last.start, sp.start), max(last.end, sp.end)}
		spans = spans[:n-1]
	}
	return append(spans, sp)
}
