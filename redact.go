package escrow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/escrowkit/escrow-go/internal/redact"
)

// redacted replaces a credential wherever the client hands text back.
const redacted = redact.Redacted

// redactor is the client's credential finder (package internal/redact, which lists the
// forms it sees through), with what the SDK's own types need of it.
type redactor struct{ r *redact.Redactor }

// newRedactor returns the redactor of a client's credential.
func newRedactor(email, key string) *redactor { return &redactor{redact.New(email, key)} }

// core is the redactor itself; nil redacts nothing.
func (r *redactor) core() *redact.Redactor {
	if r == nil {
		return nil
	}
	return r.r
}

// string returns s with every secret, in any form, replaced by [REDACTED].
func (r *redactor) string(s string) string { return r.core().String(s) }

// bytes is string for a byte slice; it returns b itself when nothing is found.
func (r *redactor) bytes(b []byte) []byte { return r.core().Bytes(b) }

// header returns a copy of h with every secret removed from names and values.
func (r *redactor) header(h http.Header) http.Header { return r.core().Header(h) }

// bytesContext is bytes that gives up when ctx ends: it then returns [redacted] alone.
func (r *redactor) bytesContext(ctx context.Context, b []byte) ([]byte, error) {
	return r.core().BytesContext(ctx, b)
}

// errorAnswer reads an answer outside 2xx into an *APIError and the fields of the
// validation shape, with every credential removed. The body is redacted once, and the
// message and fields are read from what is left: the redactor reads through four layers
// of escapes, so a key that decoding a JSON string would reveal (its own escapes and three
// more) is gone from the redacted body already. Only the message and the code, a few
// hundred characters, are redacted again: an HTML title's references are decoded beyond
// the redactor's table.
//
// When ctx ends while the body is examined, nothing of the body is shown: the error says
// so beside the status.
func (r *redactor) errorAnswer(ctx context.Context, method, path string, resp *http.Response, body []byte) (*APIError, []FieldError) {
	clean, err := r.bytesContext(ctx, body)
	if err != nil {
		return &APIError{StatusCode: resp.StatusCode, Method: method, Path: path, Header: r.header(resp.Header),
			Message: http.StatusText(resp.StatusCode) + " (the body was not examined: " + err.Error() + ")"}, nil
	}
	apiErr, fields, isJSON := parseErrorBody(method, path, resp, clean)
	if !isJSON && redactedAny(body, clean) && json.Valid(body) {
		// A mark took the letter of an escape (a piece of the key right after a "\n"), so
		// the body no longer parses: read the answer as sent, and redact what was read.
		apiErr, fields, _ = parseErrorBody(method, path, resp, body)
		for i := range fields {
			fields[i].Path = r.string(fields[i].Path)
			for j := range fields[i].Messages {
				fields[i].Messages[j] = r.string(fields[i].Messages[j])
			}
		}
	}
	apiErr.Body = clean
	apiErr.Message = r.string(apiErr.Message)
	apiErr.Code = r.string(apiErr.Code)
	apiErr.Header = r.header(resp.Header)
	return apiErr, fields
}

// redactedAny reports whether clean, what bytes returned for body, is another slice.
func redactedAny(body, clean []byte) bool {
	return len(body) != len(clean) || len(body) > 0 && &body[0] != &clean[0]
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
