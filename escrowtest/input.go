package escrowtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// decodeObject reads a request body as one JSON object whose fields are then read
// through the object's accessors. An empty body counts as {}, so that a missing field is
// reported as such (422) rather than as a syntax error. Numbers keep their text
// (json.Number), so amounts are read exactly.
func decodeObject(body []byte) (object, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return object{fields: map[string]any{}, errs: fieldErrors{}}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return object{}, badRequest("the body is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return object{}, badRequest("the body holds more than one JSON value")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return object{}, badRequest("the body must be a JSON object")
	}
	return object{fields: m, errs: fieldErrors{}}, nil
}

// object is one JSON object of a request with its place in the body, so that every
// accessor reports a bad field at its exact path in errs. Accessors treat null as absent.
type object struct {
	fields map[string]any
	path   []string
	errs   fieldErrors
	// flat objects report a bad field at path itself, naming the field in the message
	// after prefix: the spec's shape for parties (a list of messages per party index).
	// Objects inside a flat object are flat too, at the same path.
	flat   bool
	prefix string
}

// report records a message about the field of o that keys lead to.
func (o object) report(msg string, keys ...string) {
	if o.flat {
		o.errs.add(o.prefix+strings.Join(keys, ".")+": "+msg, o.path...)
		return
	}
	o.errs.add(msg, append(slices.Clone(o.path), keys...)...)
}

// fail records a message about one field of o.
func (o object) fail(key, msg string) { o.report(msg, key) }

// failSelf records a message about o as a whole.
func (o object) failSelf(msg string) {
	if len(o.path) == 0 {
		o.errs.add(msg, "all")
		return
	}
	o.errs.add(msg, o.path...)
}

// has reports whether key is present and not null.
func (o object) has(key string) bool { return o.fields[key] != nil }

// required reports a missing field, or one given as a blank string, and returns whether it
// is present with a value: "" names no currency, party or customer, and readers that take
// "" for "not given" would otherwise let it through unreported.
func (o object) required(key string) bool {
	if !o.has(key) {
		o.fail(key, "is required")
		return false
	}
	if s, isString := o.fields[key].(string); isString && strings.TrimSpace(s) == "" {
		o.fail(key, "must not be empty")
		return false
	}
	return true
}

// str returns a string field; "" when absent or not a string (reported).
func (o object) str(key string) string {
	v, present := o.fields[key]
	if !present || v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		o.fail(key, "must be a string")
	}
	return s
}

// text returns a string field that, when present, must not be blank.
func (o object) text(key string) string {
	s := o.str(key)
	if _, isString := o.fields[key].(string); isString && strings.TrimSpace(s) == "" {
		o.fail(key, "must not be empty")
	}
	return s
}

// oneOf returns a string field that must be one of allowed.
func (o object) oneOf(key string, allowed ...string) string {
	s := o.str(key)
	if s != "" && !slices.Contains(allowed, s) {
		o.fail(key, "must be one of "+strings.Join(allowed, ", "))
		return ""
	}
	return s
}

// boolean returns a boolean field; false when absent or not a boolean (reported).
func (o object) boolean(key string) bool {
	v := o.fields[key]
	if v == nil {
		return false
	}
	b, ok := v.(bool)
	if !ok {
		o.fail(key, "must be true or false")
	}
	return b
}

// looseBoolean is boolean that also takes the strings "true" and "false", which several
// production clients send in extra_attributes and the live API accepts.
func (o object) looseBoolean(key string) bool {
	switch o.fields[key] {
	case "true":
		return true
	case "false":
		return false
	}
	return o.boolean(key)
}

// integer returns an integer field within [lo, hi]; ok is false when it is absent or
// invalid (reported). A numeric string ("259200") counts as its number: several production
// clients send integers that way and the live API accepts them.
func (o object) integer(key string, lo, hi int64) (n int64, ok bool) {
	v := o.fields[key]
	if v == nil {
		return 0, false
	}
	var text string
	switch v := v.(type) {
	case json.Number:
		text = string(v)
	case string:
		text = strings.TrimSpace(v)
	}
	n, err := strconv.ParseInt(text, 10, 64)
	switch {
	case text == "" || err != nil:
		o.fail(key, "must be an integer")
	case n < lo || n > hi:
		o.fail(key, fmt.Sprintf("must be between %d and %d", lo, hi))
	default:
		return n, true
	}
	return 0, false
}

// amount returns a money field given as a JSON number or a numeric string.
func (o object) amount(key string) (cents, bool) {
	var text string
	switch v := o.fields[key].(type) {
	case nil:
		return 0, false
	case json.Number:
		text = string(v)
	case string:
		text = v
	default:
		o.fail(key, "must be a number or a numeric string")
		return 0, false
	}
	c, err := parseCents(text)
	if err != nil {
		o.fail(key, err.Error())
		return 0, false
	}
	return c, true
}

// email returns a required field that must be an e-mail address; "" when it is not.
func (o object) email(key string) string {
	v, isString := o.fields[key].(string)
	switch {
	case !o.required(key):
	case !isString:
		o.str(key) // reports the type
	case !validEmail(v):
		o.fail(key, "must be an e-mail address")
	default:
		return v
	}
	return ""
}

// httpURL returns a field that must be an absolute http or https URL.
func (o object) httpURL(key string) string {
	raw := o.str(key)
	if u, err := url.Parse(raw); raw != "" && (err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https")) {
		o.fail(key, "must be an absolute http or https URL")
		return ""
	}
	return raw
}

// timestamp returns a time field (see parseTime for the accepted forms).
func (o object) timestamp(key string) (time.Time, bool) {
	s := o.str(key)
	if s == "" {
		return time.Time{}, false
	}
	t, err := parseTime(s)
	if err != nil {
		o.fail(key, err.Error())
		return time.Time{}, false
	}
	return t, true
}

// list returns an array field; nil when absent or not an array (reported).
func (o object) list(key string) []any {
	v := o.fields[key]
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		o.fail(key, "must be a list")
	}
	return l
}

// stringList returns an array of strings.
func (o object) stringList(key string) []string {
	var out []string
	for i, v := range o.list(key) {
		s, ok := v.(string)
		if !ok {
			o.report("must be a string", key, index(i))
			continue
		}
		out = append(out, s)
	}
	return out
}

// child returns the object held by key; ok is false when it is absent or not an object.
func (o object) child(key string) (object, bool) {
	v := o.fields[key]
	if v == nil {
		return object{}, false
	}
	return o.objectAt(v, key)
}

// elements returns the objects of an array field, each with its index in its path;
// elements that are not objects are reported.
func (o object) elements(key string) []object {
	var out []object
	for i, v := range o.list(key) {
		if el, ok := o.objectAt(v, key, index(i)); ok {
			out = append(out, el)
		}
	}
	return out
}

// isEmptyList reports whether key holds [].
func (o object) isEmptyList(key string) bool {
	l, ok := o.fields[key].([]any)
	return ok && len(l) == 0
}

func (o object) objectAt(v any, keys ...string) (object, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		o.report("must be an object", keys...)
		return object{}, false
	}
	if o.flat {
		return object{fields: m, path: o.path, errs: o.errs, flat: true, prefix: o.prefix + strings.Join(keys, ".") + "."}, true
	}
	return object{fields: m, path: append(slices.Clone(o.path), keys...), errs: o.errs}, true
}

// parseTime reads an ISO 8601 timestamp with or without an offset (none means UTC), or
// a date alone (midnight UTC), as the live API's own timestamps vary.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("must be an ISO 8601 timestamp such as 2024-05-01T00:00:00Z")
}

// formatTime renders a timestamp as the live API does: microseconds and a numeric offset.
func formatTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000-07:00")
}

// validEmail reports whether s is a bare e-mail address.
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

// query reads query parameters, reporting bad ones in errs keyed by parameter name.
type query struct {
	values url.Values
	errs   fieldErrors
}

func newQuery(v url.Values) query { return query{values: v, errs: fieldErrors{}} }

func (q query) has(name string) bool { return q.values.Get(name) != "" }

// integer reads an integer within [lo, hi], def when absent.
func (q query) integer(name string, def, lo, hi int) int {
	s := q.values.Get(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		q.errs.add(fmt.Sprintf("must be an integer between %d and %d", lo, hi), name)
		return def
	}
	return n
}

// oneOf reads one of allowed, def when absent.
func (q query) oneOf(name, def string, allowed ...string) string {
	s := q.values.Get(name)
	if s == "" {
		return def
	}
	if !slices.Contains(allowed, s) {
		q.errs.add("must be one of "+strings.Join(allowed, ", "), name)
		return def
	}
	return s
}

// boolean reads true or false (also 1 or 0), false when absent.
func (q query) boolean(name string) bool {
	s := q.values.Get(name)
	if s == "" {
		return false
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		q.errs.add("must be true or false", name)
	}
	return b
}

// ids reads a list of ids given as repeated parameters (ids=1&ids=2), comma-separated
// (ids=1,2), or both; nil when absent.
func (q query) ids(name string) []int64 {
	var out []int64
	for _, v := range q.values[name] {
		for s := range strings.SplitSeq(v, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				q.errs.add(fmt.Sprintf("%q is not an integer id", s), name)
				continue
			}
			out = append(out, n)
		}
	}
	return out
}

// amount reads an amount; ok is false when it is absent or invalid.
func (q query) amount(name string) (cents, bool) {
	s := q.values.Get(name)
	if s == "" {
		return 0, false
	}
	c, err := parseCents(s)
	if err != nil {
		q.errs.add(err.Error(), name)
		return 0, false
	}
	return c, true
}

// timestamp reads a time (see parseTime); ok is false when it is absent or invalid.
func (q query) timestamp(name string) (time.Time, bool) {
	s := q.values.Get(name)
	if s == "" {
		return time.Time{}, false
	}
	t, err := parseTime(s)
	if err != nil {
		q.errs.add(err.Error(), name)
		return time.Time{}, false
	}
	return t, true
}
