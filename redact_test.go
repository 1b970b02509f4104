package escrow

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/jarcoal/httpmock"

	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/internal/redact/redacttest"
)

var (
	revealJSON = regexp.MustCompile(`\\[uU]([0-9a-fA-F]{4})`)
	revealPct  = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
)

// reveal undoes every encoding the redactor claims to see through, independently of its
// code: JSON escapes, HTML references (html.UnescapeString) and percent-escapes, four times
// over, so that nested encodings come undone too.
func reveal(s string) string {
	for range 4 {
		s = revealJSON.ReplaceAllStringFunc(s, func(m string) string {
			v, _ := strconv.ParseUint(m[2:], 16, 16)
			return string(rune(v))
		})
		s = strings.NewReplacer(`\/`, "/", `\"`, `"`, `\\`, `\`).Replace(s)
		s = html.UnescapeString(s)
		s = revealPct.ReplaceAllStringFunc(s, func(m string) string {
			v, _ := strconv.ParseUint(m[1:], 16, 8)
			return string(rune(v))
		})
	}
	return s
}

// mustRevealNone fails when s holds a secret of the test client in any encoding.
func mustRevealNone(t *testing.T, what, s string) {
	t.Helper()
	mustContainNone(t, what, s)
	mustContainNone(t, what+" (decoded)", reveal(s))
}

// encodeEach encodes every character of s with form(i, c).
func encodeEach(s string, form func(i int, c byte) string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString(form(i, s[i]))
	}
	return b.String()
}

func jsonEscaped(s string) string {
	return encodeEach(s, func(_ int, c byte) string { return fmt.Sprintf(`\u%04x`, c) })
}
func decimalEntities(s string) string {
	return encodeEach(s, func(_ int, c byte) string { return fmt.Sprintf("&#%d;", c) })
}
func hexEntities(s string) string {
	return encodeEach(s, func(_ int, c byte) string { return fmt.Sprintf("&#x%X;", c) })
}
func mixedForms(s string) string {
	return encodeEach(s, func(i int, c byte) string {
		switch i % 5 {
		case 0:
			return fmt.Sprintf(`\u%04X`, c)
		case 1:
			return fmt.Sprintf("&#%04d", c) // no semicolon, leading zeros
		case 2:
			return fmt.Sprintf("%%%02x", c)
		case 3:
			return string(c)
		}
		return fmt.Sprintf(`\u0026#x%x;`, c) // a JSON-escaped HTML reference
	})
}

// TestRedactionHoldsInEveryEncoding: a server that echoes the key and the Basic token in
// JSON escapes, HTML references and a mix of them, in its message, validation fields, body
// and headers. On main the redaction ran on the raw bytes only, so decoding the body put
// the plain key into Error(), Message and Fields(), and echoed headers were kept as sent.
func TestRedactionHoldsInEveryEncoding(t *testing.T) {
	token := basicToken(testEmail, testKey)
	for name, enc := range map[string]func(string) string{
		"raw": func(s string) string { return s }, "json": jsonEscaped, "decimal": decimalEntities,
		"hex": hexEntities, "mixed": mixedForms,
	} {
		t.Run(name, func(t *testing.T) {
			c, mt := setup(t, WithMaxRetries(0))
			key, tok := enc(testKey), enc(token)
			body := `{"message":"bad key ` + key + `","error":"` + tok + `","errors":{"reference":["echo ` + key + `"],"` + key + `":["x"]}}`
			mt.RegisterResponder(http.MethodGet, testBase+"transaction/7", respond(http.StatusUnprocessableEntity, body,
				"X-Echo-Authorization", "Basic "+tok, "X-Echo-Key", key))
			_, err := c.Transactions.Get(context.Background(), 7)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want *ValidationError, got %T %v", err, err)
			}
			mustRevealNone(t, "Error()", err.Error())
			mustRevealNone(t, "Message", ve.Message)
			mustRevealNone(t, "Code", ve.Code)
			mustRevealNone(t, "Body", string(ve.Body))
			mustRevealNone(t, "Header", fmt.Sprint(ve.Header))
			mustRevealNone(t, "Fields", fmt.Sprint(ve.Fields()))
			if len(ve.Fields()) != 2 {
				t.Errorf("fields lost in redaction: %v", ve.Fields())
			}
			for _, verb := range []string{"%s", "%q", "%v", "%+v", "%#v", "%x", "%X"} {
				mustRevealNone(t, "fmt "+verb+" of the error", fmt.Sprintf(verb, err))
				mustRevealNone(t, "fmt "+verb+" of the APIError", fmt.Sprintf(verb, *ve.APIError))
				mustRevealNone(t, "fmt "+verb+" of the ValidationError", fmt.Sprintf(verb, *ve))
				mustRevealNone(t, "hex of the error", string(hexDecodeAll(fmt.Sprintf(verb, err))))
			}
		})
	}
}

// hexDecodeAll turns %x output back into text, so that a hex-encoded key is seen.
func hexDecodeAll(s string) []byte {
	var out []byte
	for i := 0; i+1 < len(s); i += 2 {
		v, err := strconv.ParseUint(s[i:i+2], 16, 8)
		if err != nil {
			return nil
		}
		out = append(out, byte(v))
	}
	return out
}

// TestFormatOfClientHidesCredentials: on main, %s and %q of a Client printed its fields,
// the API key and the Basic header among them.
func TestFormatOfClientHidesCredentials(t *testing.T) {
	c, _ := setup(t)
	for _, verb := range []string{"%s", "%q", "%v", "%+v", "%#v", "%x", "%X", "%d"} {
		for _, v := range []any{c, *c, c.Transactions, c.Partner, c.Webhooks, c.Customers} {
			s := fmt.Sprintf(verb, v)
			mustRevealNone(t, "fmt "+verb+" of "+fmt.Sprintf("%T", v), s)
			mustRevealNone(t, "hex of fmt "+verb, string(hexDecodeAll(s)))
		}
	}
	if got := fmt.Sprintf("%v", c); !strings.Contains(got, testBase) {
		t.Errorf("%%v of a Client = %q, want its base URL", got)
	}
}

// TestFormatOfAPIKeyHidesKey: the full key returned at creation stays out of fmt.
func TestFormatOfAPIKeyHidesKey(t *testing.T) {
	k := APIKey{ID: 3, Name: "ci", Key: testKey, LastFourCharacters: "cdef"}
	for _, verb := range []string{"%s", "%q", "%v", "%+v", "%#v", "%x"} {
		for _, v := range []any{k, &k, []APIKey{k}, APIKeys{APIKeys: []APIKey{k}}} {
			s := fmt.Sprintf(verb, v)
			mustRevealNone(t, "fmt "+verb, s)
			mustRevealNone(t, "hex of fmt "+verb, string(hexDecodeAll(s)))
		}
	}
	if got := fmt.Sprintf("%+v", k); !strings.Contains(got, "Name:ci") {
		t.Errorf("%%+v of an APIKey = %q, want its other fields", got)
	}
}

// TestTransportErrorScrubbedYetMatchable: a transport error whose text echoes the key in
// escapes is scrubbed, and errors.Is still sees what it wraps.
func TestTransportErrorScrubbedYetMatchable(t *testing.T) {
	c, mt := setup(t, WithMaxRetries(0))
	mt.RegisterResponder(http.MethodGet, testBase+"transaction/7",
		fail(fmt.Errorf("proxy said %s: %w", decimalEntities(testKey), context.DeadlineExceeded)))
	_, err := c.Transactions.Get(context.Background(), 7)
	if err == nil {
		t.Fatal("want an error")
	}
	for _, verb := range []string{"%s", "%q", "%v", "%+v", "%#v", "%x"} {
		mustRevealNone(t, "fmt "+verb, fmt.Sprintf(verb, err))
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		mustRevealNone(t, "unwrapped error", e.Error())
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(DeadlineExceeded) lost: %v", err)
	}
}

// FuzzRedactEncodedKey encodes each character of the key in a form the fuzzer picks, one or
// two layers deep (the syntax characters of an escape encoded in turn), between text the
// fuzzer gives, and checks that no decoding of the redacted text shows the key. Three mixed
// layers were tried too: they produce text no encoder writes (a raw backslash beside
// escaped ones) that reads two ways, and a matcher that follows every reading of it would
// be a parser of everything; they are left out.
func FuzzRedactEncodedKey(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7}, "pre ", " post")
	f.Add([]byte{9, 18, 27, 36, 45, 54, 63}, `{"m":"`, `"}`)
	f.Add([]byte{255, 128, 64, 32, 16}, "&", "\\")
	token := basicToken(testEmail, testKey)
	r := newRedactor(testEmail, testKey)
	f.Fuzz(func(t *testing.T, choices []byte, prefix, suffix string) {
		if len(choices) == 0 {
			return
		}
		n := 0
		pick := func() byte { b := choices[n%len(choices)]; n++; return b }
		var encode func(c byte, depth int) string
		encode = func(c byte, depth int) string {
			b := pick()
			var form string
			switch b % 8 {
			case 0, 1:
				return string(c)
			case 2:
				form = fmt.Sprintf(`\u%04x`, c)
			case 3:
				form = fmt.Sprintf(`\u%04X`, c)
			case 4:
				form = fmt.Sprintf("&#%0*d;", int(b/8%3)+1, c)
			case 5:
				form = fmt.Sprintf("&#x%x", c)
			case 6:
				form = fmt.Sprintf("%%%02X", c)
			case 7:
				if name, ok := entityName(c); ok {
					return "&" + name + ";"
				}
				form = fmt.Sprintf("&#X%x;", c)
			}
			if depth == 0 {
				return form
			}
			var out strings.Builder
			for i := 0; i < len(form); i++ {
				out.WriteString(encode(form[i], depth-1))
			}
			return out.String()
		}
		for _, secret := range []string{testKey, token} {
			var enc strings.Builder
			for i := 0; i < len(secret); i++ {
				enc.WriteString(encode(secret[i], int(pick()%2)))
			}
			got := r.string(prefix + enc.String() + suffix)
			if strings.Contains(reveal(got), secret) && !strings.Contains(reveal(prefix+suffix), secret) {
				t.Fatalf("secret survives in %q (from %q)", got, enc.String())
			}
		}
	})
}

// entityNames are the HTML named references the fuzzer writes for the characters of a key
// or a token, as the redactor's table reads them (package internal/redact).
var entityNames = map[string]byte{
	"sol": '/', "plus": '+', "equals": '=', "lowbar": '_', "UnderBar": '_', "colon": ':',
	"period": '.', "commat": '@', "hyphen": '-', "dash": '-', "amp": '&', "num": '#',
	"bsol": '\\', "percnt": '%', "quot": '"', "semi": ';',
}

func entityName(c byte) (string, bool) {
	for name, v := range entityNames {
		if v == c {
			return name, true
		}
	}
	return "", false
}

// TestWithResponseHeadersRedacted: the headers WithResponse captures are redacted like an
// error's, on success too.
func TestWithResponseHeadersRedacted(t *testing.T) {
	c, mt := setup(t)
	mt.RegisterResponder(http.MethodGet, testBase+"transaction/7", respond(http.StatusOK, `{"id":7}`,
		"X-Echo", "Basic "+hexEntities(basicToken(testEmail, testKey)), "X-Request-Id", jsonEscaped(testKey)))
	var r Response
	if _, err := c.Transactions.Get(context.Background(), 7, WithResponse(&r)); err != nil {
		t.Fatal(err)
	}
	mustRevealNone(t, "Response.Header", fmt.Sprint(r.Header))
	mustRevealNone(t, "Response.RequestID", r.RequestID)
	if r.Header.Get("X-Echo") != "Basic [REDACTED]" {
		t.Errorf("X-Echo = %q, want the rest kept", r.Header.Get("X-Echo"))
	}
}

// hostileKey is chosen so that no coincidence hides a form: '/', '+' and '=' are escaped
// differently by JSON, HTML and URLs and differ between the base64 alphabets, and a letter
// comes first (a key starting with a digit hides a "%" dropped from "%34", which ends in 4).
const (
	hostileKey   = "kQ/9+zX=vb_Lm-0p/R+aT=77wEq"
	hostileEmail = "ops+escrow@market.test"
)

// setupWithKey is setup for a client of another credential.
func setupWithKey(t *testing.T, email, key string, opts ...Option) (*Client, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	c, err := NewClient(email, key, append([]Option{WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, mt
}

// credentialForms are the forms of a credential a server may echo (redactor's list), each
// named.
func credentialForms(email, key string) map[string]string {
	forms := map[string]string{"the key": key}
	encs := map[string]*base64.Encoding{"base64": base64.StdEncoding, "base64url": base64.URLEncoding,
		"base64, unpadded": base64.RawStdEncoding, "base64url, unpadded": base64.RawURLEncoding}
	for name, enc := range encs {
		forms[name+" of the key"] = enc.EncodeToString([]byte(key))
		token := enc.EncodeToString([]byte(email + ":" + key))
		forms[name+" of the token"] = token
		for cut := 4; cut < len(token); cut += 4 {
			forms[fmt.Sprintf("%s of the token, wrapped at %d", name, cut)] = token[:cut] + "\r\n" + token[cut:]
			forms[fmt.Sprintf("%s of the token, its tail from %d", name, cut)] = "..." + token[cut:]
		}
		var lines []string
		for i := 0; i < len(token); i += 8 {
			lines = append(lines, token[i:min(i+8, len(token))])
		}
		forms[name+" of the token, in lines of 8"] = strings.Join(lines, "\n")
	}
	h := hex.EncodeToString([]byte(key))
	forms["hex"], forms["HEX"] = h, strings.ToUpper(h)
	forms["hex.Dump"] = hex.Dump([]byte(key))
	forms["HEX.DUMP"] = strings.ToUpper(hex.Dump([]byte(key)))
	var pairs, quads []string
	for i := 0; i < len(key); i++ {
		pairs = append(pairs, h[2*i:2*i+2])
		if i%2 == 1 {
			quads = append(quads, h[2*i-2:2*i+2])
		}
	}
	forms["hex, colon-separated"] = strings.Join(pairs, ":")
	forms["hex, as xxd groups it"] = strings.Join(quads, " ")
	forms["hex, wrapped at 20"] = h[:20] + "\n" + h[20:]
	forms["hex, mixed case"] = strings.Map(func(r rune) rune {
		if r%2 == 0 {
			return unicode.ToUpper(r)
		}
		return r
	}, h)
	return forms
}

// leaksKey reports whether text shows the key in any of credentialForms' forms: the key
// itself or 8 characters of it, its hex in any case (8 bytes of it, separators aside), or
// at least 4 bytes of it in a decoding of any base64 run of the text, at any alignment and
// in either alphabet. It decodes independently of the
// redactor's code; reveal undoes the escapes first.
func leaksKey(text, key string) bool {
	hexKey := hex.EncodeToString([]byte(key))
	for _, s := range []string{text, reveal(text)} {
		if strings.Contains(s, key) || strings.Contains(strings.ToLower(s), hexKey) {
			return true
		}
		// 8 characters of the key as it is (a dump's text column), or 4 bytes of its hex
		// once the separators a dump prints are squeezed out.
		squeezed := strings.NewReplacer(" ", "", ":", "", "-", "").Replace(strings.ToLower(s))
		for i := 0; i+8 <= len(key); i++ {
			if strings.Contains(s, key[i:i+8]) || strings.Contains(squeezed, hexKey[2*i:2*i+16]) {
				return true
			}
		}
		runs := strings.FieldsFunc(s, func(r rune) bool {
			return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("+/-_", r))
		})
		for _, run := range runs {
			std := strings.NewReplacer("-", "+", "_", "/").Replace(run)
			for off := 0; off < 4 && off < len(std); off++ {
				piece := std[off:]
				piece = piece[:len(piece)/4*4]
				got, err := base64.StdEncoding.DecodeString(piece)
				if err != nil {
					continue
				}
				for i := 0; i+4 <= len(key); i++ {
					if bytes.Contains(got, []byte(key[i:i+4])) {
						return true
					}
				}
			}
		}
	}
	return false
}

// TestNoEncodingOfTheCredentialEscapes: a server echoes the credential in each form of
// credentialForms (the token unpadded, in the URL alphabet, wrapped across lines, base64 of
// the key alone, its hex and hex dumps, the key as a header name whose case Go changes, …),
// in an error's message, body and header, a header's name, a 2xx body it cannot decode, a
// transport error and the headers WithResponse captures; none of what the client returns
// or logs shows it.
func TestNoEncodingOfTheCredentialEscapes(t *testing.T) {
	for name, form := range credentialForms(hostileEmail, hostileKey) {
		t.Run(name, func(t *testing.T) {
			var logs logtest.Lines
			c, mt := setupWithKey(t, hostileEmail, hostileKey, WithMaxRetries(0),
				WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			msg, _ := json.Marshal("bad credential " + form)
			echo := func(status int, body string) httpmock.Responder {
				return func(req *http.Request) (*http.Response, error) {
					resp := httpmock.NewStringResponse(status, body)
					resp.Header.Set("X-Echo", form)
					resp.Header.Set("Request-Id", form)
					resp.Header[http.CanonicalHeaderKey(strings.ToUpper(strings.ReplaceAll(form, "\r\n", "")))] = []string{"1"}
					resp.Header[http.CanonicalHeaderKey("x-"+hex.EncodeToString([]byte(hostileKey)))] = []string{"1"}
					resp.Header["X-"+strings.ToUpper(hostileKey)] = []string{"1"}
					return resp, nil
				}
			}
			mt.RegisterResponder("GET", testBase+"transaction/1", echo(422, `{"message":`+string(msg)+`,"errors":{"reference":[`+string(msg)+`]}}`))
			mt.RegisterResponder("GET", testBase+"transaction/2", echo(200, `{"id": "`+form+`"`))
			mt.RegisterResponder("GET", testBase+"transaction/3", fail(errors.New("proxy said: "+form)))
			mt.RegisterResponder("GET", testBase+"transaction/4", echo(200, `{"id": 4}`))
			var outputs []string
			var ve *ValidationError
			if _, err := c.Transactions.Get(context.Background(), 1); !errors.As(err, &ve) {
				t.Fatalf("want a *ValidationError, got %v", err)
			} else {
				outputs = append(outputs, err.Error(), fmt.Sprintf("%#v", *ve.APIError), fmt.Sprint(ve.Fields()), string(ve.Body), ve.Message)
				for name, vs := range ve.Header {
					outputs = append(outputs, name+": "+strings.Join(vs, ","))
				}
			}
			var de *DecodeError
			if _, err := c.Transactions.Get(context.Background(), 2); !errors.As(err, &de) {
				t.Fatalf("want a *DecodeError, got %v", err)
			} else {
				outputs = append(outputs, err.Error(), string(de.Body), fmt.Sprintf("%#v", de))
			}
			if _, err := c.Transactions.Get(context.Background(), 3); err == nil {
				t.Fatal("want a transport error")
			} else {
				outputs = append(outputs, err.Error(), fmt.Sprintf("%+v", err))
			}
			var r Response
			if _, err := c.Transactions.Get(context.Background(), 4, WithResponse(&r)); err != nil {
				t.Fatal(err)
			}
			outputs = append(outputs, r.RequestID)
			for name, vs := range r.Header {
				outputs = append(outputs, name+": "+strings.Join(vs, ","))
			}
			outputs = append(outputs, logs.String())
			for _, out := range outputs {
				if leaksKey(out, hostileKey) || strings.Contains(strings.ToLower(out), strings.ToLower(hostileKey)) {
					t.Errorf("the credential shows in %q", out)
				}
			}
		})
	}
}

// FuzzRedactBase64Forms cuts the token, in an alphabet and with padding as the fuzzer
// picks, into pieces at the places it picks, joins them with the separators it gives
// (line breaks, spaces, JSON), between text it gives, and checks that no base64 run of the
// redacted text decodes, at any alignment, to 4 bytes of the key.
func FuzzRedactBase64Forms(f *testing.F) {
	f.Add(uint8(0), []byte{76}, "\r\n", "Basic ", "")
	f.Add(uint8(1), []byte{4, 9, 30}, "\n", `{"a":"`, `"}`)
	f.Add(uint8(2), []byte{8, 8, 8, 8, 8}, " ", "", "")
	f.Add(uint8(3), []byte{17}, "\\n", "x", "y")
	r := newRedactor(hostileEmail, hostileKey)
	encs := []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding}
	f.Fuzz(func(t *testing.T, which uint8, cuts []byte, sep, prefix, suffix string) {
		if leaksKey(prefix+suffix, hostileKey) || leaksKey(sep, hostileKey) || len(cuts) > 64 {
			return
		}
		src := hostileEmail + ":" + hostileKey
		if which&4 != 0 {
			src = hostileKey
		}
		token := encs[which%4].EncodeToString([]byte(src))
		var b strings.Builder
		b.WriteString(prefix)
		at := 0
		for _, c := range cuts {
			next := min(at+int(c), len(token))
			b.WriteString(token[at:next])
			b.WriteString(sep)
			at = next
		}
		b.WriteString(token[at:])
		b.WriteString(suffix)
		if got := r.string(b.String()); leaksKey(got, hostileKey) {
			t.Fatalf("the key shows in %q (from %q)", got, b.String())
		}
	})
}

// eachChar encodes every character of s with form.
func eachChar(s string, form func(c byte) string) string {
	return encodeEach(s, func(_ int, c byte) string { return form(c) })
}

// TestRedactionOfFormsUsersMeet: the forms of a key that a server's echo takes, each in a
// header value and an error body, with a key that hides none of them by coincidence ('/',
// '+', '=', '_' and a letter first). Each form is built here, independently of the
// redactor's tables.
func TestRedactionOfFormsUsersMeet(t *testing.T) {
	names := map[byte]string{'/': "sol", '+': "plus", '=': "equals", '_': "lowbar", '-': "hyphen"}
	forms := map[string]string{
		// A JSON escape of an HTML reference of a percent-escape: three layers, as an
		// echo of a query value, put in an HTML page, put in a JSON string writes it.
		"three layers deep": eachChar(hostileKey, func(c byte) string {
			return strings.ReplaceAll(strings.ReplaceAll(fmt.Sprintf("%%%02X", c), "%", "&#37;"), "&", `\u0026`)
		}),
		"named references": eachChar(hostileKey, func(c byte) string {
			if name, ok := names[c]; ok && c != '-' {
				return "&" + name + ";"
			}
			return string(c)
		}),
		"decimal references zero-padded to 7 digits": eachChar(hostileKey, func(c byte) string { return fmt.Sprintf("&#%07d;", c) }),
		"hex references zero-padded to 6 digits":     eachChar(hostileKey, func(c byte) string { return fmt.Sprintf("&#x%06x;", c) }),
		"percent-encoded from its first character":   eachChar(hostileKey, func(c byte) string { return fmt.Sprintf("%%%02X", c) }),
		"percent-encoded, lower case":                eachChar(hostileKey, func(c byte) string { return fmt.Sprintf("%%%02x", c) }),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(reveal(form), hostileKey) {
				t.Fatalf("the form %q does not decode to the key", form)
			}
			c, mt := setupWithKey(t, hostileEmail, hostileKey, WithMaxRetries(0))
			mt.RegisterResponder("GET", testBase+"transaction/1", respond(400, `{"message":"echo: `+strings.ReplaceAll(form, `\`, `\\`)+`"}`, "X-Echo", form))
			mt.RegisterResponder("GET", testBase+"transaction/2", respond(200, `{"id":2}`, "X-Echo", form))
			_, err := c.Transactions.Get(context.Background(), 1)
			var ae *APIError
			if !errors.As(err, &ae) {
				t.Fatalf("want an *APIError, got %v", err)
			}
			var r Response
			if _, err := c.Transactions.Get(context.Background(), 2, WithResponse(&r)); err != nil {
				t.Fatal(err)
			}
			for what, out := range map[string]string{"Error()": err.Error(), "Message": ae.Message, "Body": string(ae.Body),
				"Header": fmt.Sprint(ae.Header), "WithResponse's Header": fmt.Sprint(r.Header)} {
				if leaksKey(out, hostileKey) {
					t.Errorf("%s shows the key: %s", what, out)
				}
			}
		})
	}
}

// TestKeyInAHeaderNameIsRedactedWhateverItsCase: a server that sends the key as a header's
// name has its case changed by Go (X-Kq9-Zxvb_lm0prat77weq for kQ9-zXvb_Lm0pRaT77wEq): the
// name is still redacted, in an error's Header and in WithResponse's.
func TestKeyInAHeaderNameIsRedactedWhateverItsCase(t *testing.T) {
	for _, key := range []string{"kQ9-zXvb_Lm0pRaT77wEq", hostileKey} {
		c, mt := setupWithKey(t, hostileEmail, key, WithMaxRetries(0))
		named := func(status int) httpmock.Responder {
			return func(req *http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(status, `{"id":1}`)
				resp.Header.Set("X-"+key, "1")                         // canonicalized when the key is a token
				resp.Header["X-"+strings.ToUpper(key)] = []string{"2"} // as a server may write it
				resp.Header["x-"+hex.EncodeToString([]byte(key))] = []string{"3"}
				return resp, nil
			}
		}
		mt.RegisterResponder("GET", testBase+"transaction/1", named(403))
		mt.RegisterResponder("GET", testBase+"transaction/2", named(200))
		var ae *APIError
		if _, err := c.Transactions.Get(context.Background(), 1); !errors.As(err, &ae) {
			t.Fatalf("want an *APIError, got %v", err)
		}
		var r Response
		if _, err := c.Transactions.Get(context.Background(), 2, WithResponse(&r)); err != nil {
			t.Fatal(err)
		}
		for what, h := range map[string]http.Header{"APIError.Header": ae.Header, "WithResponse's Header": r.Header} {
			if n := len(h["X-[REDACTED]"]) + len(h["x-[REDACTED]"]); n != 3 {
				t.Errorf("%s lost headers: %v", what, h)
			}
			for name := range h {
				if low := strings.ToLower(name); strings.Contains(low, strings.ToLower(key)) || strings.Contains(low, hex.EncodeToString([]byte(key))) {
					t.Errorf("%s has the key in the name %q", what, name)
				}
			}
		}
	}
}

// ordinaryErrorBody is a validation answer of about size bytes, as a server refusing a
// large request writes it: a field per item, each with its messages.
func ordinaryErrorBody(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"message":"The given data was invalid.","errors":{"items":{`)
	for i := 0; b.Len() < size-200; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%d":{"description":["The description may not be greater than 2048 characters.","It must not contain \u201cHTML\u201d."],"schedule":{"0":{"amount":["The amount must be at least 1.00 (got 0.5)."]}}}`, i)
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// craftedErrorBody is an answer of about size bytes whose message is redacttest.Blocks of
// prefix: blocks that each spell its first 8 characters in nested encodings, and differ.
func craftedErrorBody(prefix string, size int) []byte {
	return []byte(`{"message":"` + redacttest.Blocks(prefix, size-len(`{"message":""}`)) + `"}`)
}

// errorBodies are the 1 MiB error bodies the benchmarks below read: an ordinary
// validation answer, and the crafted ones an attacker makes from the account's e-mail (the
// first 8 characters of the Basic token are base64 of "email:") or from a key's prefix.
func errorBodies(email, key string, size int) map[string][]byte {
	return map[string][]byte{
		"ordinary":      ordinaryErrorBody(size),
		"crafted-email": craftedErrorBody(basicToken(email, key), size),
		"crafted-key":   craftedErrorBody(key, size),
	}
}

// BenchmarkRedactor measures the redactor's throughput on 1 MiB bodies beside a plain scan
// of the text for the key and the four Basic tokens (bytes.Index for each): the
// floor any redactor that reads the text pays.
//
//	go test -run '^$' -bench BenchmarkRedactor -benchtime 20x .
func BenchmarkRedactor(b *testing.B) {
	r := newRedactor(testEmail, testKey)
	forms := [][]byte{[]byte(testKey)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, []byte(enc.EncodeToString([]byte(testEmail+":"+testKey))))
	}
	for name, body := range errorBodies(testEmail, testKey, maxErrorBody) {
		b.Run(name+"/scan", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				for _, f := range forms {
					if bytes.Contains(body, f) {
						b.Fatal("the body holds a secret")
					}
				}
			}
		})
		b.Run(name+"/redact", func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				r.bytes(body)
			}
		})
	}
}

// BenchmarkErrorFromBody measures what a 1 MiB error answer costs to become an error,
// beside what a plain http.Client GET, io.ReadAll and json.Unmarshal of the same answer
// cost in the same run, from the same loopback server: the "x-plain" metric is the ratio.
//
//	go test -run '^$' -bench BenchmarkErrorFromBody -benchtime 20x .
func BenchmarkErrorFromBody(b *testing.B) {
	for name, body := range errorBodies(testEmail, testKey, maxErrorBody) {
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnprocessableEntity)
				_, _ = w.Write(body)
			}))
			defer srv.Close()
			c, err := NewClient(testEmail, testKey, WithBaseURL(srv.URL+"/2017-09-01/"), WithMaxRetries(0))
			if err != nil {
				b.Fatal(err)
			}
			plainClient := srv.Client()
			var plain, sdk time.Duration
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				start := time.Now()
				resp, err := plainClient.Get(srv.URL + "/2017-09-01/transaction/7")
				if err != nil {
					b.Fatal(err)
				}
				data, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				var v any
				if err != nil || json.Unmarshal(data, &v) != nil {
					b.Fatalf("plain read: %v", err)
				}
				mid := time.Now()
				if _, err := c.Transactions.Get(context.Background(), 7); err == nil {
					b.Fatal("want an error")
				}
				sdk += time.Since(mid)
				plain += mid.Sub(start)
			}
			b.ReportMetric(float64(sdk)/float64(plain), "x-plain")
		})
	}
}

// TestKeyInACallerPathIsRedactedFromEveryError: a caller who puts the key, or another form
// of the credential, in a Client.Do path gets every kind of error with it redacted: an
// *APIError, a *ValidationError, a *DecodeError, a *TransportError, a *RateLimitError for
// a 429 and for a call held back, and the refusal of a path or of a reference; in Error()
// and under %v, %+v and %#v. The server's own text says nothing of the key: what shows is
// what the client echoes of the request.
func TestKeyInACallerPathIsRedactedFromEveryError(t *testing.T) {
	forms := map[string]string{
		"the key":        hostileKey,
		"the token":      basicToken(hostileEmail, hostileKey),
		"hex of the key": hex.EncodeToString([]byte(hostileKey)),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			c, mt := setupWithKey(t, hostileEmail, hostileKey, WithMaxRetries(0), WithMaxWait(time.Second))
			mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
				switch req.URL.Query().Get("answer") {
				case "404":
					return httpmock.NewStringResponse(404, `{"message":"no such thing"}`), nil
				case "422":
					return httpmock.NewStringResponse(422, `{"errors":{"reference":["taken"]}}`), nil
				case "undecodable":
					return httpmock.NewStringResponse(200, `{"id":`), nil
				case "429":
					resp := httpmock.NewStringResponse(429, `{}`)
					resp.Header.Set("Retry-After", "3600")
					return resp, nil
				}
				return nil, errors.New("connection reset")
			})
			path := "echo/" + url.PathEscape(form)
			do := func(answer string) error {
				var out map[string]any
				return c.Do(context.Background(), "GET", path+"?answer="+answer, nil, &out)
			}
			var errs []error
			for _, answer := range []string{"404", "422", "undecodable", "none", "429"} {
				errs = append(errs, do(answer))
			}
			errs = append(errs, do("held")) // held back: the 429 asked for an hour
			errs = append(errs, c.Do(context.Background(), "GET", path+"#fragment", nil, nil))
			_, err := c.Transactions.GetByReference(context.Background(), form+"\x7f")
			errs = append(errs, err)
			var ae *APIError
			var ve *ValidationError
			var de *DecodeError
			var te *TransportError
			var re *RateLimitError
			for i, want := range []any{&ae, &ve, &de, &te, &re, &re, &ErrInvalidArgument, &ErrInvalidArgument} {
				switch target := want.(type) {
				case *error:
					if !errors.Is(errs[i], *target) {
						t.Errorf("error %d: %v, want %v", i, errs[i], *target)
					}
				default:
					if !errors.As(errs[i], target) {
						t.Fatalf("error %d: %T %v, want a %T", i, errs[i], errs[i], target)
					}
				}
			}
			for _, err := range errs {
				for _, verb := range []string{"%s", "%v", "%+v", "%#v"} {
					out := fmt.Sprintf(verb, err)
					if leaksKey(out, hostileKey) || strings.Contains(out, form) {
						t.Errorf("%T under %s shows the credential: %s", err, verb, out)
					}
				}
			}
			for _, v := range []any{*ae, *ve, *de, *te, *re} {
				if out := fmt.Sprintf("%#v", v); leaksKey(out, hostileKey) || strings.Contains(out, form) {
					t.Errorf("%T shows the credential: %s", v, out)
				}
			}
		})
	}
}

// TestOrdinaryAnswersAreLeftAsTheyAre: redaction removes the credential and nothing else:
// a megabyte of validation answers, and one of blocks spelling the first 8 characters of
// the Basic token (the account's e-mail: no secret) in nested escapes, come back byte for
// byte as they were.
func TestOrdinaryAnswersAreLeftAsTheyAre(t *testing.T) {
	r := newRedactor(testEmail, testKey)
	bodies := errorBodies(testEmail, testKey, 1<<20)
	for _, name := range []string{"ordinary", "crafted-email"} {
		if got := r.bytes(bodies[name]); !bytes.Equal(got, bodies[name]) {
			t.Errorf("the %s body changed in redaction", name)
		}
	}
}

// endAtEOF is a transport whose answers end the call's context when their body has been
// read: the context ends while the client examines the body.
type endAtEOF struct {
	cancel context.CancelFunc
	status int
	body   string
}

func (e endAtEOF) RoundTrip(req *http.Request) (*http.Response, error) {
	resp := httpmock.NewStringResponse(e.status, e.body)
	resp.Body = readThenCancel{r: strings.NewReader(e.body), cancel: e.cancel}
	return resp, nil
}

type readThenCancel struct {
	r      io.Reader
	cancel context.CancelFunc
}

func (b readThenCancel) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.cancel()
	}
	return n, err
}

func (readThenCancel) Close() error { return nil }

// TestErrorBodyWithheldWhenTheContextEndsWhileItIsExamined: a call whose context ends
// while the client redacts an error answer's body returns at once with the answer's
// status (errors.Is still matches its sentinel), saying the body was not examined, and
// shows nothing of the body: not a redaction half done.
func TestErrorBodyWithheldWhenTheContextEndsWhileItIsExamined(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"message":"no transaction for ` + jsonEscaped(testKey) + `","errors":{"id":["unknown"]}}`
	c, err := NewClient(testEmail, testKey, WithBaseURL(testBase), WithMaxRetries(0),
		WithHTTPClient(&http.Client{Transport: endAtEOF{cancel: cancel, status: 404, body: body}}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Transactions.Get(ctx, 7)
	var ae *APIError
	if !errors.As(err, &ae) || !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %T %v, want the 404's *APIError", err, err)
	}
	if ae.Body != nil || !strings.Contains(ae.Message, "not examined") || strings.Contains(err.Error(), "unknown") {
		t.Errorf("the error shows the body: %#v", ae)
	}
	mustRevealNone(t, "Error()", err.Error())
}
