package redact

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// Redacted replaces a credential wherever the client hands text back.
const Redacted = "[REDACTED]"

// Redactor finds the client's credential in text the client hands back (error bodies,
// messages and headers, DecodeError bodies, transport errors, WithResponse, logs), in every
// form a server plausibly echoes it in. What a server can echo is what it was sent: the
// key (in the Basic token, or in a URL or body when a caller put it there) and the token.
// It can pass either on as it is, transcoded into another text encoding, or re-encoded into
// bytes-as-text. The forms covered, and so removed wherever they appear:
//
//  1. The key and the token as sent, and base64 and base64url of the key and of
//     "email:key", padded or not: the encodings of bytes as text that HTTP uses.
//  2. Each of those with any of its characters escaped, up to maxLayers layers deep, as
//     JSON (\u0037, \/), HTML (&#55; &#x37; &#X0037 and the named &sol; &plus; &equals; …
//     with zero-padded digits) and URLs (%37) escape them: the text encodings a body, a
//     header or an echoed URL is written in. Each layer keeps its offsets in the text, so
//     only the secret goes (see the package's doc for how).
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
	// secrets are matched in every layer (2), and in header names in any case (5).
	secrets []string
	// grams holds every piece of 4 to gramLen characters of the key's base64 cores (3).
	grams *gramSet
	// key is the key itself, for its pieces (4); keyGrams holds every 4 bytes of it in a
	// row.
	key      string
	keyGrams *gramSet

	// text and names are the automata of the secrets and of every keyPieceLen characters
	// of the key, for text and for header names; built at first use.
	once        sync.Once
	text, names *automaton
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
	r := &Redactor{grams: newGramSet(), keyGrams: newGramSet(), key: key}
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
					r.grams.add(core[i : i+n])
				}
			}
		}
	}
	r.secrets = append(r.secrets, hex.EncodeToString([]byte(key)))
	r.secrets = dedupe(r.secrets) // unpadded forms equal padded ones at some lengths
	for i := 0; i+4 <= len(key); i++ {
		r.keyGrams.add(key[i : i+4])
	}
	return r
}

// automata builds the automata at first use: a client that never meets an error never
// pays for them.
func (r *Redactor) automata() (text, names *automaton) {
	r.once.Do(func() {
		patterns := slices.Clone(r.secrets)
		for i := 0; i+keyPieceLen <= len(r.key); i++ {
			patterns = append(patterns, r.key[i:i+keyPieceLen])
		}
		r.text = newAutomaton(patterns, false)
		r.names = newAutomaton(patterns, true)
	})
	return r.text, r.names
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

// String returns s with every secret, in any form, replaced by [Redacted].
func (r *Redactor) String(s string) string {
	out, _ := r.StringContext(context.Background(), s)
	return out
}

// StringContext is String that gives up when ctx ends, between chunks of its passes: it
// then returns [Redacted] alone, never the text, and the context's error.
func (r *Redactor) StringContext(ctx context.Context, s string) (string, error) {
	if r == nil || s == "" {
		return s, nil
	}
	if len(s) > maxText {
		return Redacted, nil
	}
	text, _ := r.automata()
	return r.redact(ctx, s, text)
}

// maxText bounds the text read: a longer one (no answer the SDK reads is) is replaced
// whole, so that places in it fit the offsets' int32.
const maxText = 1 << 30

// Bytes is String for a byte slice; it returns b itself when nothing is found.
func (r *Redactor) Bytes(b []byte) []byte {
	out, _ := r.BytesContext(context.Background(), b)
	return out
}

// BytesContext is StringContext for a byte slice; it returns b itself when nothing is
// found.
func (r *Redactor) BytesContext(ctx context.Context, b []byte) ([]byte, error) {
	if r == nil || len(b) == 0 {
		return b, nil
	}
	s := string(b)
	out, err := r.StringContext(ctx, s)
	if err == nil && len(out) == len(s) && out == s {
		return b, nil
	}
	return []byte(out), err
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
		name := r.name(k)
		out[name] = append(out[name], rv...)
	}
	return out
}

// name redacts a header name, matching the secrets in any case.
func (r *Redactor) name(k string) string {
	if r == nil || k == "" {
		return k
	}
	_, names := r.automata()
	out, _ := r.redact(context.Background(), k, names)
	return out
}

// redact removes from s what a finds in any layer of it, and the key's base64 and hex
// runs in its last layer.
func (r *Redactor) redact(ctx context.Context, s string, a *automaton) (string, error) {
	spans, err := r.find(&pass{ctx: ctx}, s, a)
	if err != nil {
		return Redacted, err
	}
	if len(spans) == 0 {
		return s, nil
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Redacted)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String(), nil
}

// find returns the spans of s to redact, in order, apart.
func (r *Redactor) find(p *pass, s string, a *automaton) ([]span, error) {
	spans, err := a.findAll(p, s, nil)
	if err != nil {
		return nil, err
	}
	var found []span
	var chain []*offsets // each layer's offsets in the one below
	layer := s
	for range maxLayers {
		next, m, ok, err := decodeLayer(p, layer)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		chain, layer = append(chain, m), next
		if found, err = a.findNear(p, layer, m, found[:0]); err != nil {
			return nil, err
		}
		spans = appendMapped(spans, found, chain)
	}
	for _, rule := range []func(*pass, string, []span) ([]span, error){r.base64Runs, r.hexRuns} {
		if found, err = rule(p, layer, found[:0]); err != nil {
			return nil, err
		}
		spans = appendMapped(spans, found, chain)
	}
	return mergeSpans(spans), nil
}

// appendMapped appends found, spans of the top layer of chain in order, as spans of the
// text.
func appendMapped(spans, found []span, chain []*offsets) []span {
	for k := len(chain) - 1; k >= 0; k-- {
		c := cursor{m: chain[k]}
		for i, sp := range found {
			start := c.at(sp.start)
			found[i] = span{start, c.at(sp.end)}
		}
	}
	return append(spans, found...)
}

// mergeSpans sorts spans and merges those that overlap.
func mergeSpans(spans []span) []span {
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var out []span
	for _, sp := range spans {
		out = addSpan(out, sp)
	}
	return out
}
