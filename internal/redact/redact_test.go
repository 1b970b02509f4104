package redact

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/escrowkit/escrow-go/internal/redact/redacttest"
)

// TestRedactorKeepsOtherText: only the secret is replaced, and near misses are left alone.
func TestRedactorKeepsOtherText(t *testing.T) {
	r := &Redactor{secrets: []string{"7777_abc"}} // the secret alone: no key, no runs
	for in, want := range map[string]string{
		"key 7777_abc!":                    "key [REDACTED]!",
		`k=\u0037777\u005fabc;`:            "k=[REDACTED];",
		"&#55;&#x37;&#X0037;7&lowbar;abc.": "[REDACTED].",
		"7777_ab":                          "7777_ab",
		"&&&% \\u00 &#;&#x;%4":             "&&&% \\u00 &#;&#x;%4",
		"7777_abc7777_abc":                 "[REDACTED][REDACTED]",
	} {
		if got := r.String(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNilRedactorRedactsNothing: a client without a credential hands text back as it is.
func TestNilRedactorRedactsNothing(t *testing.T) {
	var r *Redactor
	if got := r.String("4171_key"); got != "4171_key" {
		t.Errorf("nil String = %q", got)
	}
	if got := r.Bytes([]byte("x")); string(got) != "x" {
		t.Errorf("nil Bytes = %q", got)
	}
}

// TestHeaderRedactsNamesInAnyCase: a header named after the key, in the case Go gives it,
// goes, and its values are kept under the redacted name.
func TestHeaderRedactsNamesInAnyCase(t *testing.T) {
	r := New("shop@example.com", "4171_abcdefghijklmnop")
	h := r.Header(map[string][]string{"4171_abcdefghijklmnop": {"v"}, "X-Other": {"4171_abcdefghijklmnop"}})
	if len(h[Redacted]) != 1 || h[Redacted][0] != "v" || h["X-Other"][0] != Redacted {
		t.Errorf("Header = %v", h)
	}
}

// TestNamedEntitiesOfEveryKeyCharacterAreRedacted: a key holding one of the characters
// that have an HTML name, echoed with that character written as its named entity (the
// key's "/" as "&sol;"), is redacted whole, for every name of the table. A name left out
// would leak such a key through any error body an HTML-escaping server writes. The key
// has the character every two letters, so that no plain piece of it is long enough to be
// caught another way.
func TestNamedEntitiesOfEveryKeyCharacterAreRedacted(t *testing.T) {
	for name, c := range map[string]string{
		"sol": "/", "plus": "+", "equals": "=", "lowbar": "_", "UnderBar": "_", "colon": ":",
		"period": ".", "commat": "@", "hyphen": "-", "dash": "-", "amp": "&", "num": "#",
		"bsol": `\`, "percnt": "%", "quot": `"`, "semi": ";",
	} {
		t.Run(name, func(t *testing.T) {
			key := strings.Join([]string{"4A", "bC", "dE", "fG", "hI", "jK", "lM"}, c)
			r := New("shop@example.com", key)
			echo := strings.ReplaceAll(key, c, "&"+name+";")
			if got := r.String("key=" + echo + "."); got != "key="+Redacted+"." {
				t.Errorf("the key %q echoed as %q: %q, want it redacted", key, echo, got)
			}
		})
	}
}

// TestBasicTokenRedactedWholeInEveryEncoding: the Basic token (base64 of "email:key"), in
// each of the four base64 alphabets and paddings, echoed with every character escaped as
// JSON does, is redacted whole, padding included: a token left in part still hands back
// the account's e-mail and the bytes around the key. The key is chosen so that the four
// forms differ ('+' against '-', a padding '=').
func TestBasicTokenRedactedWholeInEveryEncoding(t *testing.T) {
	const email, key = "shop@example.com", "Zq8s?~>/EcR+eT=_4A"
	r := New(email, key)
	seen := map[string]bool{}
	for name, enc := range map[string]*base64.Encoding{"std": base64.StdEncoding, "url": base64.URLEncoding, "raw std": base64.RawStdEncoding, "raw url": base64.RawURLEncoding} {
		token := enc.EncodeToString([]byte(email + ":" + key))
		if seen[token] {
			t.Fatalf("%s: the fixture's encodings coincide", name)
		}
		seen[token] = true
		var echo strings.Builder
		for i := 0; i < len(token); i++ {
			fmt.Fprintf(&echo, `\u%04x`, token[i])
		}
		if got := r.String(`{"auth":"` + echo.String() + `"}`); got != `{"auth":"`+Redacted+`"}` {
			t.Errorf("%s token %s, JSON-escaped: %q, want it redacted whole", name, token, got)
		}
	}
}

// TestHexDigitsOfEitherCaseRead: a key echoed as HTML hex references and JSON escapes
// whose hex digits are upper or lower case is redacted: servers write both.
func TestHexDigitsOfEitherCaseRead(t *testing.T) {
	const key = "Zq8s?~>/EcR+eT=_4A"
	r := New("shop@example.com", key)
	for _, form := range []string{"&#x%x;", "&#x%X;", "&#X%X;", `\u%04x`, `\u%04X`} {
		var echo strings.Builder
		for i := 0; i < len(key); i++ {
			fmt.Fprintf(&echo, form, key[i])
		}
		if got := r.String("key " + echo.String()); got != "key "+Redacted {
			t.Errorf("the key as %q: %q, want it redacted", form, got)
		}
	}
}

// TestShortPiecesOfTheKeyKept: text that shares fewer than 8 characters with the key in a
// row ("4171_Zq", an order number, a word) is not a secret and is handed back as it is; a
// piece of 8 goes.
func TestShortPiecesOfTheKeyKept(t *testing.T) {
	r := New("shop@example.com", "4171_Zq8sEcReTkEy0123")
	for in, want := range map[string]string{
		"order 4171_Zq paid":     "order 4171_Zq paid",
		"ref sEcReTk, 0123 left": "ref sEcReTk, 0123 left",
		"dump |4171_Zq8s|":       "dump |" + Redacted + "|",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUnfinishedEscapesAtTheEndKept: text ending in the start of an escape (an '&' and a
// name without its ';', a '&#', a '\u', a '%') is handed back as it is, whatever follows
// would have been.
func TestUnfinishedEscapesAtTheEndKept(t *testing.T) {
	r := New("shop@example.com", "4A/bC/dE/fG/hI")
	for _, in := range []string{"4A&sol", "x &", "x &#", "x &#x", `x \u00`, "x %4", "x &sol"} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q, want it as it is", in, got)
		}
	}
}

// TestBytesRedactsASecretAsLongAsItsMark: Bytes hands back its input only when nothing was
// found; a key of exactly len(Redacted) characters, replaced by a mark as long as itself,
// is still removed.
func TestBytesRedactsASecretAsLongAsItsMark(t *testing.T) {
	key := "Ab/cD+eF=g"
	if len(key) != len(Redacted) {
		t.Fatalf("the key has %d characters, want %d", len(key), len(Redacted))
	}
	r := New("shop@example.com", key)
	if got := string(r.Bytes([]byte("key " + key))); got != "key "+Redacted {
		t.Errorf("Bytes = %q, want the key redacted", got)
	}
}

// TestHexValReadsHexDigitsOnly: HexVal, which the SDK's path checks use too, gives the value
// of 0-9, a-f and A-F and -1 for every other byte.
func TestHexValReadsHexDigitsOnly(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := -1
		if v, err := strconv.ParseUint(string(rune(c)), 16, 8); err == nil && c < 0x80 {
			want = int(v)
		}
		if got := HexVal(byte(c)); got != want {
			t.Errorf("HexVal(%q) = %d, want %d", byte(c), got, want)
		}
	}
}

// TestKeyPieceAtTheEndOfTheText: a piece of the key that ends the text (a message cut
// after the key) goes, up to the last character.
func TestKeyPieceAtTheEndOfTheText(t *testing.T) {
	r := New("shop@example.com", "4171_Zq8sEcReTkEy0123")
	if got := r.String("tail 4171_Zq8sEc"); got != "tail "+Redacted {
		t.Errorf("String = %q, want the key's piece redacted", got)
	}
}

// TestReferencesZeroPaddedTo8Digits: a key echoed as decimal and hex references
// zero-padded to 8 digits, the most the redactor reads, is redacted.
func TestReferencesZeroPaddedTo8Digits(t *testing.T) {
	const key = "4171_Zq8sEcReTkEy0123"
	r := New("shop@example.com", key)
	for _, form := range []string{"&#%08d;", "&#x%08x;"} {
		var echo strings.Builder
		for i := 0; i < len(key); i++ {
			fmt.Fprintf(&echo, form, key[i])
		}
		if got := r.String("key " + echo.String()); got != "key "+Redacted {
			t.Errorf("the key as %q: %q, want it redacted", form, got)
		}
	}
}

// TestHexDumpsWithEverySeparator: the key dumped as hex pairs apart by a hyphen, a colon,
// one space or two (hex.Dump's middle gap) is redacted; a dump cut after an odd digit is
// read up to it, without failing.
func TestHexDumpsWithEverySeparator(t *testing.T) {
	const key = "4171_Zq8sEcReTkEy0123"
	r := New("shop@example.com", key)
	for _, sep := range []string{"-", ":", " ", "  "} {
		var pairs []string
		for i := 0; i < len(key); i++ {
			pairs = append(pairs, fmt.Sprintf("%02x", key[i]))
		}
		dump := strings.Join(pairs, sep)
		if got := r.String("dump " + dump + " end"); got != "dump "+Redacted+" end" {
			t.Errorf("pairs apart by %q: %q, want the dump redacted", sep, got)
		}
	}
	for _, in := range []string{"dump 6b 51 2f 3", "dump 6b512f3"} {
		if got := r.String(in); got != in {
			t.Errorf("String(%q) = %q, want it as it is", in, got)
		}
	}
}

// everyFourth returns a key of groups of three bytes, each group ending in third, so that
// every fourth character of its base64 is the one third's low six bits give ('?' gives '/'
// in the standard alphabet and '_' in the URL one; '>' gives '+' and '-').
func everyFourth(third byte) string {
	var b strings.Builder
	for _, pair := range []string{"Zq", "8/", "E+", "c=", "Rk", "4A", "T_", "mW", "x/", "P+", "k=", "Q9", "rT", "7w", "Eq", "b_", "L0", "a+", "/z", "V="} {
		b.WriteString(pair)
		b.WriteByte(third)
	}
	return b.String()
}

// TestTokenWrappedAcrossLinesRedactedInBothAlphabets: the Basic token, echoed in a body
// wrapped at 76 columns as MIME does, so that no line is the whole token, is redacted line
// by line, in the standard and the URL alphabet, with keys whose base64 has a '+', '/',
// '-' or '_' every fourth character. A redactor that cut runs at one of those characters,
// or knew the key's base64 in one alphabet only, would hand back every line.
func TestTokenWrappedAcrossLinesRedactedInBothAlphabets(t *testing.T) {
	const email = "shops@example.com" // with ':' 18 bytes: the key starts a 3-byte group
	for _, third := range []byte{'?', '>'} {
		key := everyFourth(third)
		r := New(email, key)
		for name, enc := range map[string]*base64.Encoding{"standard": base64.StdEncoding, "URL": base64.URLEncoding} {
			token := enc.EncodeToString([]byte(email + ":" + key))
			if sep := token[24+3]; !strings.ContainsRune("+/-_", rune(sep)) || token[24+7] != sep || len(token) <= 76 {
				t.Fatalf("the %s token %s does not have the key's every fourth character a %q", name, token, sep)
			}
			wrapped := token[:76] + "\r\n" + token[76:]
			if got, want := r.String(wrapped), Redacted+"\r\n"+Redacted; got != want {
				t.Errorf("%s token of a key with %q, wrapped: %q, want %q", name, token[27], got, want)
			}
		}
	}
}

// TestTokenWrappedInAJSONStringLeavesValidJSON: a JSON body that echoes the token wrapped
// with "\n" escapes (as a server quoting a header it received writes it) is redacted
// with its escapes whole: the body (APIError.Body) still parses, and holds no piece of
// the key's part of the token.
func TestTokenWrappedInAJSONStringLeavesValidJSON(t *testing.T) {
	const email, key = "shop@example.com", "Zq8s?~>/EcR+eT=_4A9kd"
	r := New(email, key)
	token := base64.StdEncoding.EncodeToString([]byte(email + ":" + key))
	for _, esc := range []string{`\n`, `\r\n`, `\t`, `\u00e9`} {
		body := `{"echo":"` + token[:16] + esc + token[16:32] + esc + token[32:] + `"}`
		got := r.String(body)
		var v map[string]string
		if err := json.Unmarshal([]byte(got), &v); err != nil {
			t.Errorf("wrapped with %s: %s no longer parses: %v", esc, got, err)
		}
		for _, piece := range []string{token[24:32], token[32:40]} { // the key's part
			if strings.Contains(got, piece) {
				t.Errorf("wrapped with %s: %s shows %s, of the key", esc, got, piece)
			}
		}
	}
}

// TestBase64OfTheKeyRedactedWithItsPadding: the key's own base64, padded, in either
// alphabet, goes whole, its padding with it: "[REDACTED]==" would show that a value was
// cut, not removed.
func TestBase64OfTheKeyRedactedWithItsPadding(t *testing.T) {
	const key = "Zq8s?~>/EcR+eT=_4A9" // 19 bytes: two characters of padding
	r := New("shop@example.com", key)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		b64 := enc.EncodeToString([]byte(key))
		if !strings.HasSuffix(b64, "==") {
			t.Fatalf("the fixture's base64 %s is not padded", b64)
		}
		if got := r.String(`{"key":"` + b64 + `"}`); got != `{"key":"`+Redacted+`"}` {
			t.Errorf("%s: %q, want it redacted whole", b64, got)
		}
	}
}

// TestCutBase64OfTheKeyRedactedUpToTheEllipsis: the key's base64, cut after any number of
// characters from 4 on and ended with an ellipsis, as a page or a log shortens a long
// value, loses what it holds of the key and keeps the ellipsis: a cut of 4 characters
// still carries 3 bytes of the key, and the text after the value is not the secret.
func TestCutBase64OfTheKeyRedactedUpToTheEllipsis(t *testing.T) {
	const key = "Zq8s?~>/EcR+eT=_4A9"
	r := New("shop@example.com", key)
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		b64 := enc.EncodeToString([]byte(key))
		for n := 4; n <= len(b64); n++ {
			if got, want := r.String("key "+b64[:n]+"… more"), "key "+Redacted+"… more"; got != want {
				t.Errorf("cut after %d: %q, want %q", n, got, want)
			}
		}
	}
}

// TestBase64OfTheKeyInAHeaderNameRedactedAtEveryAlignment: a header named after the base64
// of the key behind 0, 1 or 2 other bytes (so at each of the three alignments), in either
// alphabet, has its name's case changed by Go, and is still redacted: no 8 characters of
// the key's base64, in any case, are left in the name, and the value is kept under it.
// Matched in its own case only, the key's base64 at another alignment than the first would
// be handed back in the header's name.
func TestBase64OfTheKeyInAHeaderNameRedactedAtEveryAlignment(t *testing.T) {
	const key = "ZQ8S?~>/ECR+ET=_4A9KLMNOPQRSTUV"
	r := New("shop@example.com", key)
	for _, prefix := range []string{"", "k", "k:"} {
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			b64 := enc.EncodeToString([]byte(prefix + key))
			name := http.CanonicalHeaderKey("X-Echo-" + b64)
			h := r.Header(http.Header{name: {"v"}})
			tail := strings.ToLower(b64[4:]) // past the characters that carry the prefix's bits
			for got, vs := range h {
				if len(h) != 1 || len(vs) != 1 || vs[0] != "v" {
					t.Errorf("%q: Header = %v, want one name with the value v", name, h)
				}
				for i := 0; i+8 <= len(tail); i++ {
					if strings.Contains(strings.ToLower(got), tail[i:i+8]) {
						t.Errorf("the name %q redacted to %q, which holds %q of the key's base64", name, got, tail[i:i+8])
						break
					}
				}
			}
		}
	}
}

// TestKeyWithJSONShortEscapesRedacted: a key holding '/', '"' or '\' every two letters,
// echoed in a JSON string with those written as the short escapes \/ (PHP's json_encode
// writes every slash so), \" and \\, is redacted whole. Read as two characters each, no
// piece of the key between them is long enough to be caught another way.
func TestKeyWithJSONShortEscapesRedacted(t *testing.T) {
	for _, c := range []string{"/", `"`, `\`} {
		key := strings.Join([]string{"4A", "bC", "dE", "fG", "hI", "jK", "lM"}, c)
		r := New("shop@example.com", key)
		echo := strings.ReplaceAll(key, c, `\`+c)
		if got := r.String(`{"key":"` + echo + `"}`); got != `{"key":"`+Redacted+`"}` {
			t.Errorf("the key %q echoed as %q: %q, want it redacted", key, echo, got)
		}
	}
}

// TestLiteralPercentBeforeTheKeysBase64TakesNothingOfIt: a '%' that starts no escape (as
// in "100%"), right before the key's base64, is read as itself: the base64 goes whole, and
// no character of it is left beside the mark as the rest of a would-be escape.
func TestLiteralPercentBeforeTheKeysBase64TakesNothingOfIt(t *testing.T) {
	const key = "Zq8s?~>/EcR+eT=_4A9"
	r := New("shop@example.com", key)
	b64 := base64.RawURLEncoding.EncodeToString([]byte(key))
	if HexVal(b64[0]) >= 0 || HexVal(b64[1]) >= 0 {
		t.Fatalf("the fixture's base64 %s starts with a hex digit: the '%%' would start an escape", b64)
	}
	for _, n := range []int{5, 8, len(b64)} {
		if got, want := r.String("100%"+b64[:n]+" done"), "100%"+Redacted+" done"; got != want {
			t.Errorf("%d characters of the key's base64 after a '%%': %q, want %q", n, got, want)
		}
	}
}

// craftedTexts are texts made to cost a redactor the most (redacttest.Blocks of each
// secret), and one of escape starts alone.
func craftedTexts(r *Redactor) map[string]string {
	texts := map[string]string{"escape starts": strings.Repeat(`\&%`, 1<<15)}
	for _, secret := range r.secrets {
		texts["blocks of "+secret[:8]] = redacttest.Blocks(secret, 96<<10)
	}
	return texts
}

// TestRedactionReadsEachTextAFewTimesOver: redacting a text, however crafted, reads it
// whole once, each layer decoded from it twice (decoding it, then matching around its
// escapes) and the last layer twice more (its base64 and hex runs): no more than
// (3+2*maxLayers) times its length. A redactor that backtracked over the readings of an
// escape, or read a pattern's length around each escape of a text made of escapes, would
// read it hundreds of times.
func TestRedactionReadsEachTextAFewTimesOver(t *testing.T) {
	r := New("partner@example.com", "4171_Zq8sEcReTkEyThAtMuStNeVeRlEaK0123456789abcdef")
	text, _ := r.automata()
	for name, s := range craftedTexts(r) {
		p := &pass{ctx: context.Background()}
		if _, err := r.find(p, s, text); err != nil {
			t.Fatal(err)
		}
		if limit := (3 + 2*maxLayers) * len(s); p.read > limit || p.read < len(s) {
			t.Errorf("%s: %d bytes read for a text of %d, want from %d to %d", name, p.read, len(s), len(s), limit)
		}
	}
}

// endingContext is a context whose Err reports it ended from the after-th look on.
type endingContext struct {
	context.Context
	looks, after int
}

func (c *endingContext) Err() error {
	if c.looks++; c.looks > c.after {
		return context.DeadlineExceeded
	}
	return nil
}

// TestEndedContextStopsRedactionAndShowsNothing: a context that ends while a text is
// redacted stops the redaction within a chunk of the place it ended, and the text is not
// handed back: Redacted alone is, with the context's error.
func TestEndedContextStopsRedactionAndShowsNothing(t *testing.T) {
	r := New("partner@example.com", "4171_Zq8sEcReTkEyThAtMuStNeVeRlEaK0123456789abcdef")
	text, _ := r.automata()
	s := strings.Repeat(`key \u0034171_Zq8s "&amp;" 100%. `, 8*chunk/32)
	for _, after := range []int{0, 1, 3, 6} {
		ctx := &endingContext{Context: context.Background(), after: after}
		p := &pass{ctx: ctx}
		if _, err := r.find(p, s, text); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ended after %d looks: err = %v", after, err)
		}
		if p.read > (after+1)*chunk {
			t.Errorf("ended after %d looks: %d bytes read, want at most a chunk past each look", after, p.read)
		}
		ctx = &endingContext{Context: context.Background(), after: after}
		if got, err := r.StringContext(ctx, s); got != Redacted || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ended after %d looks: StringContext = %.40q…, %v; want only %s and the error", after, got, err, Redacted)
		}
	}
}
