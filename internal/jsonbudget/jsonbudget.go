// Package jsonbudget bounds what decoding a JSON document can cost before encoding/json
// decodes it, and finds the list an object holds without building a map of its members.
//
// A hostile or broken server can send a document whose size says little about what it
// costs to decode: a 16 MiB list of "{}" becomes millions of zeroed structs. [Check] walks
// the document beside the Go type it will decode into and refuses it when the memory it
// would keep exceeds a budget proportional to its size. The walk allocates nothing per
// element, so the refusal itself is cheap. It is the SDK's machinery, kept apart from the
// client so that both read alone; the SDK's own tests (limits_test.go) pin the memory the
// client keeps end to end, and this package's tests pin the walk.
package jsonbudget

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// ErrSeveralLists is TopLevelList's error for an object with several lists and none of the
// expected keys: which one is meant cannot be told.
var ErrSeveralLists = errors.New("an object with several lists and none of the expected keys")

// The decoding budget.
const (
	// freeBytes: documents up to this size are decoded without a budget; the worst
	// such document costs a few megabytes.
	freeBytes = 64 << 10
	// ratio and floor bound the memory a document may make the decoder keep: ratio times
	// its size, plus the floor. An honest transaction costs about 1.3 times its JSON (the
	// SDK's TestHonestDocumentsFitTheBudget); a list of empty objects costs 80 times.
	ratio = 3
	floor = 256 << 10
	// maxNesting refuses documents nested deeper than any answer of the API is.
	maxNesting = 128
)

// ErrBudget is the error for a document that would cost more memory to decode than an
// honest document of its size (the SDK wraps it in a *DecodeError).
var ErrBudget = errors.New("the document holds more elements than a document of its size honestly could")

// Check estimates the memory decoding body into out would keep, and refuses the
// document when it exceeds the budget for its size. It walks the document beside the Go
// type it decodes into: an element of a list costs its type's size, a string its length,
// an amount its big integer; unknown fields cost nothing, since the decoder skips them.
// It runs before encoding/json, which would otherwise grow a slice of 248-byte items for
// every "{}," of a hostile answer (the 16 MiB answer took a 4.5 GB heap).
func Check(body []byte, out any) error {
	if len(body) <= freeBytes || out == nil {
		return nil
	}
	w := budgetWalker{data: body, limit: int64(ratio)*int64(len(body)) + floor, fields: map[reflect.Type][]budgetField{}}
	t := reflect.TypeOf(out)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if err := w.value(t, 0); err != nil {
		return err
	}
	return nil
}

type budgetWalker struct {
	data   []byte
	pos    int
	cost   int64
	limit  int64
	depth  int
	fields map[reflect.Type][]budgetField
}

type budgetField struct {
	name string
	typ  reflect.Type
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType  = reflect.TypeFor[json.RawMessage]()
)

// scalarCost is what a decoded number or string-encoded value of a custom type keeps at
// most beside its field: an Amount's big integer.
const scalarCost = 48

func (w *budgetWalker) charge(n int64) error {
	w.cost += n
	if w.cost > w.limit {
		return fmt.Errorf("%w (%d bytes)", ErrBudget, len(w.data))
	}
	return nil
}

func (w *budgetWalker) skipSpace() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\r', '\n':
			w.pos++
		default:
			return
		}
	}
}

func (w *budgetWalker) syntax() error {
	return fmt.Errorf("malformed JSON at offset %d", w.pos)
}

// value walks one JSON value that decodes into t. t is nil for a value the decoder skips;
// generic > 0 means t decodes itself (a json.Unmarshaler) and every element of a list in
// the value is charged generic bytes, the largest element its type can hold.
func (w *budgetWalker) value(t reflect.Type, generic int64) error {
	w.skipSpace()
	if w.pos >= len(w.data) {
		return w.syntax()
	}
	t, err := w.deref(t)
	if err != nil {
		return err
	}
	generic = genericCost(t, generic)
	switch w.data[w.pos] {
	case '{':
		return w.object(t, generic)
	case '[':
		return w.array(t, generic)
	}
	return w.scalar(t, generic)
}

// genericCost is what each list element in a value of type t is charged: the largest
// element its type can hold when t is the outermost type that decodes itself, else what
// an enclosing such type set (0 when none).
func genericCost(t reflect.Type, generic int64) int64 {
	if t != nil && generic == 0 && t != rawMessageType && reflect.PointerTo(t).Implements(unmarshalerType) {
		return maxElemCost(t, map[reflect.Type]bool{})
	}
	return generic
}

// deref charges what the pointers in t allocate and returns the type they point to.
func (w *budgetWalker) deref(t reflect.Type) (reflect.Type, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		if err := w.charge(int64(t.Elem().Size())); err != nil {
			return nil, err
		}
		t = t.Elem()
	}
	return t, nil
}

// scalar walks a string, number, true, false or null: a string costs its length, and a
// type that decodes itself its customCost.
func (w *budgetWalker) scalar(t reflect.Type, generic int64) error {
	var n int64
	if start := w.pos; w.data[w.pos] == '"' {
		if err := w.skipString(); err != nil {
			return err
		}
		n = int64(w.pos - start)
	} else {
		for w.pos < len(w.data) && !strings.ContainsRune(",]} \t\r\n", rune(w.data[w.pos])) {
			w.pos++
		}
	}
	if t == nil {
		return nil
	}
	return w.charge(n + w.customCost(t, generic))
}

// customCost is what a scalar costs beyond its field: something only for types that
// decode themselves (Amount, Timestamp).
func (w *budgetWalker) customCost(t reflect.Type, generic int64) int64 {
	if generic > 0 || reflect.PointerTo(t).Implements(unmarshalerType) {
		return scalarCost
	}
	return 0
}

func (w *budgetWalker) enter() error {
	w.depth++
	if w.depth > maxNesting {
		return fmt.Errorf("%w: nested deeper than %d", ErrBudget, maxNesting)
	}
	w.pos++ // the opening delimiter
	return nil
}

func (w *budgetWalker) object(t reflect.Type, generic int64) error {
	if err := w.enter(); err != nil {
		return err
	}
	defer func() { w.depth-- }()
	p := w.planObject(t, generic)
	for first := true; ; first = false {
		if done, err := w.next('}', first); done || err != nil {
			return err
		}
		key, err := w.key()
		if err != nil {
			return err
		}
		ft, err := w.memberType(p, generic, key)
		if err != nil {
			return err
		}
		if err := w.value(ft, generic); err != nil {
			return err
		}
	}
}

// objectPlan is how an object's members decode: into a struct's fields, each into elem
// at memberCost (a map, an interface, a type that decodes itself), or nowhere (t nil).
type objectPlan struct {
	t          reflect.Type
	fields     []budgetField
	elem       reflect.Type
	memberCost int64
}

func (w *budgetWalker) planObject(t reflect.Type, generic int64) objectPlan {
	switch {
	case t == nil || t == rawMessageType:
	case generic > 0:
		return objectPlan{t: t, elem: t} // stays in the generic mode of the type that decodes itself
	case t.Kind() == reflect.Struct:
		return objectPlan{t: t, fields: w.structFields(t)}
	case t.Kind() == reflect.Map:
		return objectPlan{t: t, elem: t.Elem(), memberCost: int64(t.Key().Size()+t.Elem().Size()) + 32}
	case t.Kind() == reflect.Interface:
		return objectPlan{t: t, elem: t, memberCost: 64}
	}
	return objectPlan{} // skipped, or a mismatch the decoder fails on
}

// memberType is the type the member named by the quoted key decodes into, charging what
// the member itself costs.
func (w *budgetWalker) memberType(p objectPlan, generic int64, key []byte) (reflect.Type, error) {
	switch {
	case p.t == nil:
		return nil, nil
	case generic == 0 && p.t.Kind() == reflect.Struct:
		return fieldFor(p.fields, key), nil
	}
	return p.elem, w.charge(p.memberCost + int64(len(key)))
}

func (w *budgetWalker) array(t reflect.Type, generic int64) error {
	if err := w.enter(); err != nil {
		return err
	}
	defer func() { w.depth-- }()
	elem, each := arrayElem(t, generic)
	for first := true; ; first = false {
		if done, err := w.next(']', first); done || err != nil {
			return err
		}
		if err := w.charge(each); err != nil {
			return err
		}
		if err := w.value(elem, generic); err != nil {
			return err
		}
	}
}

// arrayElem is the type a list's elements decode into (nil: skipped) and what each costs.
func arrayElem(t reflect.Type, generic int64) (reflect.Type, int64) {
	switch {
	case t == nil || t == rawMessageType:
	case generic > 0:
		return t, generic
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		return t.Elem(), int64(t.Elem().Size())
	case t.Kind() == reflect.Interface:
		return t, 16 + 32
	}
	return nil, 0
}

// next moves to the next member of an object or array, past the comma before any but the
// first; done reports that the closing bracket came instead, and was passed.
func (w *budgetWalker) next(closing byte, first bool) (done bool, err error) {
	w.skipSpace()
	if w.pos >= len(w.data) {
		return false, w.syntax()
	}
	if w.data[w.pos] == closing {
		w.pos++
		return true, nil
	}
	if !first {
		if w.data[w.pos] != ',' {
			return false, w.syntax()
		}
		w.pos++
		w.skipSpace()
	}
	return false, nil
}

// skipString moves past a JSON string starting at w.pos.
func (w *budgetWalker) skipString() error {
	i := w.pos + 1
	for {
		j := bytes.IndexByte(w.data[i:], '"')
		if j < 0 {
			return w.syntax()
		}
		i += j
		backslashes := 0
		for k := i - 1; k > w.pos && w.data[k] == '\\'; k-- {
			backslashes++
		}
		i++
		if backslashes%2 == 0 {
			w.pos = i
			return nil
		}
	}
}

// structFields lists the JSON names of a struct's fields, embedded structs' included.
func (w *budgetWalker) structFields(t reflect.Type) []budgetField {
	if f, ok := w.fields[t]; ok {
		return f
	}
	out := []budgetField{}
	for i := range t.NumField() {
		out = append(out, w.fieldsOf(t.Field(i))...)
	}
	w.fields[t] = out
	return out
}

// fieldsOf is what one struct field adds to its struct's JSON names: nothing when JSON
// ignores it, an embedded struct's fields, or itself.
func (w *budgetWalker) fieldsOf(f reflect.StructField) []budgetField {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case name == "-" || (!f.IsExported() && !f.Anonymous):
		return nil
	case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
		return w.structFields(f.Type)
	}
	return []budgetField{{name: cmp.Or(name, f.Name), typ: f.Type}}
}

// fieldFor finds the field a quoted key decodes into, as encoding/json does: the exact
// name first, then one that matches without regard to case.
func fieldFor(fields []budgetField, quoted []byte) reflect.Type {
	key := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		var s string
		if json.Unmarshal(quoted, &s) != nil {
			return nil
		}
		key = []byte(s)
	}
	for _, f := range fields {
		if f.name == string(key) {
			return f.typ
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, string(key)) {
			return f.typ
		}
	}
	return nil
}

// maxElemCost is the largest element a list anywhere under t can hold, for types that
// decode themselves and whose lists the walker cannot follow by field.
func maxElemCost(t reflect.Type, seen map[reflect.Type]bool) int64 {
	if seen[t] {
		return 16
	}
	seen[t] = true
	return max(16, ownElemCost(t), nestedElemCost(t, seen))
}

// ownElemCost is what one element of t itself costs when t is a list: a slice's or an
// array's element (not a byte's: byte lists decode from strings), a map's entry with its
// overhead, an interface's value; 0 for other types.
func ownElemCost(t reflect.Type) int64 {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t != rawMessageType && t.Elem().Kind() != reflect.Uint8 {
			return int64(t.Elem().Size())
		}
	case reflect.Map:
		return int64(t.Key().Size()+t.Elem().Size()) + 32
	case reflect.Interface:
		return 64
	}
	return 0
}

// nestedElemCost is the largest element a list under t's element type or fields can hold.
func nestedElemCost(t reflect.Type, seen map[reflect.Type]bool) int64 {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
		return maxElemCost(t.Elem(), seen)
	case reflect.Struct:
		var best int64
		for i := range t.NumField() {
			best = max(best, maxElemCost(t.Field(i).Type, seen))
		}
		return best
	}
	return 0
}

// TopLevelList finds the list an object holds, without building a map of every member: a
// hostile object of a million one-byte members would cost a hundred bytes each. It is the
// member under the first of keys present (the last of duplicates, as in a map), else the
// object's only list; a document that is not an object is returned as it is.
func TopLevelList(b []byte, keys []string) (json.RawMessage, error) {
	w := budgetWalker{data: b}
	w.skipSpace()
	if w.pos >= len(b) || b[w.pos] != '{' {
		return b, nil
	}
	w.pos++
	c := listCandidates{keys: keys, found: map[string]json.RawMessage{}}
	for first := true; ; first = false {
		done, err := w.next('}', first)
		if err != nil {
			return nil, err
		}
		if done {
			return c.pick()
		}
		key, val, err := w.member()
		if err != nil {
			return nil, err
		}
		c.see(key, val)
	}
}

// listCandidates is what TopLevelList keeps of an object's members while reading it.
type listCandidates struct {
	keys  []string
	found map[string]json.RawMessage // the members under keys: at most len(keys) entries
	only  json.RawMessage            // the last list member
	lists int                        // how many members are lists
}

// see keeps what TopLevelList may answer of one member.
func (c *listCandidates) see(key string, val json.RawMessage) {
	if slices.Contains(c.keys, key) {
		c.found[key] = val
	}
	if len(val) > 0 && val[0] == '[' {
		c.only, c.lists = val, c.lists+1
	}
}

// pick is TopLevelList's answer once the object is read.
func (c *listCandidates) pick() (json.RawMessage, error) {
	for _, k := range c.keys {
		if v, ok := c.found[k]; ok {
			return v, nil
		}
	}
	switch c.lists {
	case 0:
		return json.RawMessage("null"), nil
	case 1:
		return c.only, nil
	}
	return nil, ErrSeveralLists
}

// member reads an object's member at the walker's position: its key, decoded, and its
// value as it is.
func (w *budgetWalker) member() (string, json.RawMessage, error) {
	quoted, err := w.key()
	if err != nil {
		return "", nil, err
	}
	var key string
	if err := json.Unmarshal(quoted, &key); err != nil {
		return "", nil, err
	}
	w.skipSpace()
	valStart := w.pos
	if err := w.value(nil, 0); err != nil {
		return "", nil, err
	}
	return key, json.RawMessage(w.data[valStart:w.pos]), nil
}

// key reads a member's quoted key and the ':' after it, returning the key as written.
func (w *budgetWalker) key() ([]byte, error) {
	start := w.pos
	if w.pos >= len(w.data) || w.data[w.pos] != '"' {
		return nil, w.syntax()
	}
	if err := w.skipString(); err != nil {
		return nil, err
	}
	quoted := w.data[start:w.pos]
	w.skipSpace()
	if w.pos >= len(w.data) || w.data[w.pos] != ':' {
		return nil, w.syntax()
	}
	w.pos++
	return quoted, nil
}
