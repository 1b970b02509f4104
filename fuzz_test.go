package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/jarcoal/httpmock"
)

// The fuzz targets feed arbitrary bytes to every decoder the SDK exposes. Each asserts that
// nothing panics and that every failure is one of the package's typed errors.

func FuzzDecodeTransaction(f *testing.F) {
	f.Add([]byte(readTestdataF(f, "transaction.json")))
	f.Add([]byte(`{"items": [{"schedule": [{"amount": "1e30"}], "fees": [{"split": "0.5", "amount": 7}]}]}`))
	f.Add([]byte(`{"creation_date": "2019-04-03T11:01:38.880000", "close_date": 5}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var tx Transaction
		if json.Unmarshal(b, &tx) != nil {
			return
		}
		for _, it := range tx.Items { // formatting a decoded amount must stay cheap and safe
			for _, s := range it.Schedule {
				_ = s.Amount.String()
			}
			for _, fee := range it.Fees {
				_ = fee.Amount.String()
			}
		}
		_, _ = tx.Party(RoleSeller)
		_ = tx.State() // derived from whatever decoded: never panics
		_ = tx.Totals().Of(Me).Net()
	})
}

// FuzzParseAmount: ParseAmount never panics, refuses with ErrInvalidAmount, and what it
// accepts has whole cents and survives a round trip through its text.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"1000", "1000.50", "-5", "12.345", "1e3", "NaN", "", "0.10", "007.10", "1000.500"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAmount(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidAmount) {
				t.Fatalf("ParseAmount(%q): untyped error %v", s, err)
			}
			return
		}
		text, err := a.MarshalText()
		if err != nil {
			t.Fatalf("ParseAmount(%q) = %s, which does not marshal: %v", s, a, err)
		}
		back, err := ParseAmount(string(text))
		if err != nil || back.Cmp(a) != 0 {
			t.Fatalf("%q → %s → %v, %v", s, text, back, err)
		}
	})
}

func FuzzDecodeCustomer(f *testing.F) {
	f.Add([]byte(readTestdataF(f, "customer.json")))
	f.Add([]byte(`{"date_of_birth": "1982-03-10T00:00:00", "verification": {"personal": {"status": 1}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Customer
		_ = json.Unmarshal(b, &c)
	})
}

func FuzzErrorBody(f *testing.F) {
	f.Add(422, []byte(validationBody))
	f.Add(404, []byte(`{"error": "not found"}`))
	f.Add(502, []byte(`<html><title>Bad gateway</title></html>`))
	f.Add(400, []byte(`{"errors": {"items": {"0": {"fees": {"all": ["x"]}}}}}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 100 || status > 999 {
			return
		}
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		apiErr, fields, _ := parseErrorBody("GET", "/x", resp, body)
		if apiErr == nil {
			t.Fatal("no APIError")
		}
		_ = apiErr.Error()
		if len(fields) > 0 {
			_ = (&ValidationError{APIError: apiErr, fields: fields}).Error()
		}
	})
}

func FuzzParseEvent(f *testing.F) {
	f.Add("POST", "application/json", []byte(`{"event": "ship", "event_type": "transaction", "transaction_id": 29292}`))
	f.Add("POST", "", []byte(`{"event": "x", "transaction_id": 1e3}`))
	f.Add("PUT", "text/plain", []byte(`hello`))
	f.Fuzz(func(t *testing.T, method, contentType string, body []byte) {
		if !validMethod(method) {
			return
		}
		r := httptest.NewRequest(method, "/hook", strings.NewReader(string(body)))
		r.Header.Set("Content-Type", contentType)
		ev, err := ParseEvent(r)
		switch {
		case err != nil && !errors.Is(err, ErrInvalidEvent):
			t.Fatalf("untyped error %v", err)
		case err == nil && (ev.TransactionID <= 0 || ev.Name == ""):
			t.Fatalf("accepted %+v", ev)
		}
	})
}

// FuzzResponse runs whole calls against arbitrary answers.
func FuzzResponse(f *testing.F) {
	f.Add(200, []byte(readTestdataF(f, "transaction.json")))
	f.Add(201, []byte(`{"id": "7"}`))
	f.Add(429, []byte(`{"error": "slow"}`))
	f.Add(422, []byte(validationBody))
	f.Add(302, []byte(``))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if status < 200 || status > 599 {
			return
		}
		mt := httpmock.NewMockTransport()
		mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
			resp := httpmock.NewBytesResponse(status, body)
			resp.Request = req
			return resp, nil
		})
		c, err := NewClient(testEmail, testKey, WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt}), WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		tx, err := c.Transactions.Get(context.Background(), 1)
		if err == nil {
			if tx == nil {
				t.Fatal("nil transaction without an error")
			}
			return
		}
		var apiErr *APIError
		var rl *RateLimitError
		var de *DecodeError
		var te *TransportError
		if !errors.As(err, &apiErr) && !errors.As(err, &rl) && !errors.As(err, &de) && !errors.As(err, &te) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		mustContainNone(t, "error", err.Error())
	})
}

func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, r := range m {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

func readTestdataF(f *testing.F, name string) string {
	b, err := readFile(name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// FuzzJSONString: the fast path for plain strings decodes exactly as encoding/json does,
// and refuses what it refuses.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`"12.50"`, `"2024-05-01T12:00:00Z"`, `"a\"b"`, `"\u00e9"`, `"é"`, `"`, `""`, `"a` + "\x01" + `"`, `12`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := jsonString(b)
		var want string
		wantErr := json.Unmarshal(b, &want)
		if (err == nil) != (wantErr == nil) || (err == nil && got != want) {
			t.Fatalf("jsonString(%q) = %q, %v; encoding/json: %q, %v", b, got, err, want, wantErr)
		}
	})
}

// serverReading resolves a path relative to the base the way the most lenient server or
// proxy in safeSegment's list would, each reading applied together: escapes undone until
// nothing changes (%XX and %uXXXX), "\" and full-width slashes as "/", ";" parameters cut,
// full-width dots and overlong UTF-8 dots as ".", trailing dots and spaces dropped. It
// reports the depth below the base at which each segment lands, and false if any segment
// climbs above it or is a "." or "..": the property is written without safeSegment's code.
func serverReading(escaped string) bool {
	s := escaped
	for range 64 {
		d := percentOnce(s)
		if d == s {
			break
		}
		s = d
	}
	s = strings.NewReplacer("\\", "/", "\uff0f", "/", "\u2215", "/", "\u2044", "/", "\uff3c", "/", "\ufe68", "/",
		"\uff0e", ".", "\u2024", ".", "\ufe52", ".", "\xc0\xae", ".", "\xe0\x80\xae", ".").Replace(s)
	depth := 0
	for _, seg := range strings.Split(s, "/") {
		if i := strings.IndexByte(seg, ';'); i >= 0 {
			seg = seg[:i]
		}
		switch strings.TrimRight(seg, ". ") {
		case "":
			if strings.Contains(seg, ".") {
				return false // ".", "..", "...", ".. " all climb or stay somewhere
			}
		default:
			depth++
		}
	}
	return depth >= 0
}

// percentOnce undoes one layer of %XX and %uXXXX escapes.
func percentOnce(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
			if (s[i+1] == 'u' || s[i+1] == 'U') && i+5 < len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
					b.WriteRune(rune(v))
					i += 5
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzDoPath: whatever path Client.Do accepts, no lenient reading of it leaves the base
// or holds a dot segment (TestDoAllowsEveryRouteOfTheTable pins what must stay allowed).
func FuzzDoPath(f *testing.F) {
	for _, p := range climbingPaths {
		f.Add(p)
	}
	for _, r := range routeTable() {
		f.Add(strings.NewReplacer("{", "", "}", "").Replace(r.path()))
	}
	f.Add("transaction/reference/order%2F2024%2F55?x=1")
	f.Fuzz(func(t *testing.T, path string) {
		escaped, _, err := relativePath(path)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("relativePath(%q) = %v, not ErrInvalidArgument", path, err)
			}
			return
		}
		if !serverReading(escaped) {
			t.Fatalf("Do accepts %q (sent as %q), which a lenient server resolves outside the base", path, escaped)
		}
	})
}
