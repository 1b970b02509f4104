package escrowtest

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
)

// apiError is an answer other than success. Handlers return it as an error; the
// dispatcher renders it as a wireError body.
type apiError struct {
	status  int
	code    string
	message string
	action  string // set when an action was refused
	state   string
	itemID  int64
	header  http.Header
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message) }

func (e *apiError) response() response {
	return response{status: e.status, header: e.header, body: wireError{
		Error: e.code, Message: e.message, Action: e.action, State: e.state, ItemID: e.itemID,
	}}
}

func newError(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, "bad_request", format, args...)
}

func forbidden(format string, args ...any) *apiError {
	return newError(http.StatusForbidden, "forbidden", format, args...)
}

func notFound(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, "not_found", format, args...)
}

// invalidState refuses an action the current state does not allow; nothing changes.
func invalidState(action, state string, itemID int64, format string, args ...any) *apiError {
	e := newError(http.StatusBadRequest, "invalid_state", format, args...)
	e.action, e.state, e.itemID = action, state, itemID
	return e
}

// fieldErrors collects validation messages in the spec's shape (part 7): objects keyed by
// field name or by index written as a string, with lists of messages at the leaves. It
// implements error, so handlers return it like an apiError, as a 422.
type fieldErrors map[string]any

// add records msg at path, once: a field two checks find blank is reported blank once. A
// key that has to be both a leaf and an object keeps its messages under "all", the key the
// spec gives fees for messages about the whole list.
func (fe fieldErrors) add(msg string, path ...string) {
	node := fe
	for _, key := range path[:len(path)-1] {
		switch v := node[key].(type) {
		case fieldErrors:
			node = v
			continue
		case []string:
			node[key] = fieldErrors{"all": v}
		default:
			node[key] = fieldErrors{}
		}
		node = node[key].(fieldErrors)
	}
	last := path[len(path)-1]
	switch v := node[last].(type) {
	case fieldErrors:
		if !slices.Contains(asList(v["all"]), msg) {
			v["all"] = append(asList(v["all"]), msg)
		}
	default:
		if !slices.Contains(asList(v), msg) {
			node[last] = append(asList(v), msg)
		}
	}
}

func asList(v any) []string {
	l, _ := v.([]string)
	return l
}

// index writes a list index as the spec keys it in error objects.
func index(i int) string { return strconv.Itoa(i) }

func (fe fieldErrors) Error() string {
	return fmt.Sprintf("validation failed on %d fields", len(fe))
}

// orNil returns fe as an error when it holds a message, and nil otherwise.
func (fe fieldErrors) orNil() error {
	if len(fe) == 0 {
		return nil
	}
	return fe
}

// fieldError is a 422 about one field that reads, from Go, as its message: for the
// harness's methods, whose callers print errors rather than render them.
type fieldError struct {
	field, message string
}

func (e fieldError) Error() string { return e.field + ": " + e.message }

// Unwrap is the error in the spec's shape, which errorResponse renders.
func (e fieldError) Unwrap() error { return fieldErrors{e.field: []string{e.message}} }
