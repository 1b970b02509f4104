package escrowtest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A cassette is one exchange with the API that `escrow record` saw pass through it, kept
// as one JSON file in a directory, named by its place in the recording
// ("00001-POST-transaction.json"). Cassettes hold no credentials: the account that sent a
// request is kept by its e-mail address alone, never with its key, password or
// Authorization value, and delivery secrets in webhook URLs are masked. So a recording
// made against the provider's sandbox can be attached to an issue, and replayed against
// the emulator (ReplayCassettes, `escrow conformance --cassettes`) to measure where the
// two part.

// CassetteKind says what a cassette holds.
type CassetteKind string

const (
	// CassetteExchange is a request and its answer.
	CassetteExchange CassetteKind = "exchange"
	// CassetteAccount is an account an emulator's control API made (POST
	// /_emulator/customers), kept without the credentials it answered: a replay makes the
	// same account at the same point of the recording.
	CassetteAccount CassetteKind = "account"
)

// Cassette is one recorded exchange.
type Cassette struct {
	Seq  int          `json:"seq"`
	Kind CassetteKind `json:"kind"`
	// Account is the e-mail address the request authenticated as (the user of its Basic
	// credentials); "" for a request without credentials, such as the control API's.
	Account string `json:"account,omitempty"`
	// Partner marks an account cassette's account an approved partner.
	Partner bool   `json:"partner,omitempty"`
	Method  string `json:"method,omitempty"`
	// Path is relative to the API's base URL ("transaction/200001"), or absolute
	// ("/_emulator/transactions/200001/approve_payment") for a path outside it.
	Path       string `json:"path,omitempty"`
	Query      string `json:"query,omitempty"`
	AsCustomer string `json:"as_customer,omitempty"`
	// RequestBody holds a JSON body, RequestText any other.
	RequestBody json.RawMessage `json:"request_body,omitempty"`
	RequestText string          `json:"request_text,omitempty"`
	Status      int             `json:"status,omitempty"`
	// ResponseHeader leaves out the headers of the connection (Date, Content-Length).
	ResponseHeader http.Header     `json:"response_header,omitempty"`
	ResponseBody   json.RawMessage `json:"response_body,omitempty"`
	ResponseText   string          `json:"response_text,omitempty"`
	Started        time.Time       `json:"started"`
	// Duration is how long the upstream took to answer, in milliseconds.
	Duration float64 `json:"duration_ms"`
}

// FileName is the name the cassette is kept under in its directory: the files sort in
// the order of the recording.
func (c *Cassette) FileName() string {
	what := string(c.Kind)
	if c.Kind == CassetteExchange {
		what = c.Method + "-" + strings.Trim(c.Path, "/")
	}
	return fmt.Sprintf("%05d-%.80s.json", c.Seq, strings.Map(fileSafe, what))
}

// fileSafe keeps an ASCII letter, digit, '-' or '_' of a file name, and makes any other
// rune '_'.
func fileSafe(r rune) rune {
	if strings.ContainsRune(fileSafeRunes, r) {
		return r
	}
	return '_'
}

// fileSafeRunes are the runes a cassette's file name keeps.
const fileSafeRunes = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"

// SetBodies keeps a request and a response body in c: as JSON when they are, as text
// otherwise.
func (c *Cassette) SetBodies(request, response []byte) {
	c.RequestBody, c.RequestText = splitBody(request)
	c.ResponseBody, c.ResponseText = splitBody(response)
}

func splitBody(b []byte) (json.RawMessage, string) {
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return nil, ""
	case json.Valid(b):
		var compact bytes.Buffer
		if json.Compact(&compact, b) == nil {
			return compact.Bytes(), ""
		}
	}
	return nil, string(b)
}

// maxCassetteFile bounds one cassette file a replay reads.
const maxCassetteFile = 16 << 20

// ReadCassettes reads the cassettes of dir, in the order they were recorded.
func ReadCassettes(dir string) ([]Cassette, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Cassette
	for _, name := range names {
		c, err := readCassette(name)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("escrowtest: no cassette (*.json) in %s", dir)
	}
	slices.SortStableFunc(out, func(a, b Cassette) int { return a.Seq - b.Seq })
	return out, nil
}

func readCassette(name string) (Cassette, error) {
	var c Cassette
	f, err := os.Open(name)
	if err != nil {
		return c, err
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxCassetteFile))
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("escrowtest: cassette %s: %w", name, err)
	}
	if c.Kind != CassetteExchange && c.Kind != CassetteAccount {
		return c, fmt.Errorf("escrowtest: cassette %s: unknown kind %q", name, c.Kind)
	}
	if c.Kind == CassetteExchange && (c.Method == "" || c.Status == 0) {
		return c, fmt.Errorf("escrowtest: cassette %s: an exchange needs a method and a status", name)
	}
	return c, nil
}

// Difference is one way a replayed answer departed from the recorded one.
type Difference struct {
	// Seq, Method and Path name the exchange that showed it, as recorded.
	Seq          int
	Method, Path string
	// Field is "status", or the path of a field in the answer's body
	// ("items[0].status.shipped"; "" for the body as a whole).
	Field string
	// Recorded and Replayed say what each showed: a status, "missing", a JSON type, a flag.
	Recorded, Replayed string
}

// String reads "#3 GET transaction/200001: items[0].status.shipped: recorded true, replayed false".
func (d Difference) String() string {
	field := d.Field
	if field == "" {
		field = "body"
	}
	return fmt.Sprintf("#%d %s %s: %s: recorded %s, replayed %s", d.Seq, d.Method, d.Path, field, d.Recorded, d.Replayed)
}

// ReplayOption configures a replay.
type ReplayOption func(*replayConfig)

type replayConfig struct {
	hc       *http.Client
	keys     map[string]string
	partners []string
}

// ReplayHTTPClient sends the replayed requests with hc, such as one that trusts an
// emulator's certificate (Server.Client). The default trusts the system's roots and gives
// up on a request after a minute. Redirects are not followed, whatever hc says: a
// recorded redirect is compared as the answer it was.
func ReplayHTTPClient(hc *http.Client) ReplayOption {
	return func(c *replayConfig) { c.hc = hc }
}

// ReplayCredentials gives the target's API key for each account of the recording, by
// e-mail address: how a recording is replayed against a server without the emulator's
// control API (the sandbox). Accounts it does not name are made through the control API.
func ReplayCredentials(keys map[string]string) ReplayOption {
	return func(c *replayConfig) { c.keys = keys }
}

// ReplayPartners names accounts to make approved partners on the target, beyond those
// the recording shows to be (an account cassette marked partner, or one that sent
// As-Customer or called a partner endpoint).
func ReplayPartners(emails ...string) ReplayOption {
	return func(c *replayConfig) { c.partners = append(c.partners, emails...) }
}

// ReplayCassettes replays the cassettes of dir in order against the API at baseURL (its
// base URL, with the version segment), as Replay does, and reports each difference with
// t.Errorf; an unreadable directory or a target that cannot be reached fails t at once.
func ReplayCassettes(t testing.TB, dir, baseURL string, opts ...ReplayOption) {
	t.Helper()
	diffs, err := Replay(t.Context(), dir, baseURL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("replaying %s: %s", dir, d)
	}
}

// Replay sends the exchanges recorded in dir to the API at baseURL in order and returns
// every difference between the answers it gets and those recorded: the status, the media
// type, whether RateLimit-Remaining is sent, fields missing or extra, a value of another
// JSON type, a flag (boolean) with another value, a list of another length. Other values
// (timestamps, amounts, messages) and other headers are not compared.
//
// Ids differ between servers: each id the recording's answers hold (the value, number or
// string, of a field "id", "ids", "…_id" or "…_ids") is mapped to the one the target
// answered in its place, and requests carry the mapped ids in their paths, queries and
// bodies; an id that maps to two different ones is a difference. Ids are mapped by value,
// whatever they name: where two kinds of resource share an id value in a recording (a
// transaction and an item both 1234), the second shows as an id that maps twice. Credentials are the target's own: each account of the recording is given
// its key from ReplayCredentials, or else made on the target through the emulator's
// control API (POST /_emulator/customers) when the recording first uses it, an approved
// partner if the recording shows it to be one. The error is for what stops the replay: an
// unreadable cassette, an account that cannot be made, a request that gets no answer.
func Replay(ctx context.Context, dir, baseURL string, opts ...ReplayOption) ([]Difference, error) {
	cassettes, err := ReadCassettes(dir)
	if err != nil {
		return nil, err
	}
	base, err := replayBase(baseURL)
	if err != nil {
		return nil, err
	}
	var cfg replayConfig
	for _, o := range opts {
		o(&cfg)
	}
	r := newReplayer(base, cfg)
	r.notePartners(cassettes, cfg.partners)
	var diffs []Difference
	for i := range cassettes {
		d, err := r.replay(ctx, &cassettes[i])
		if err != nil {
			return diffs, err
		}
		diffs = append(diffs, d...)
	}
	return diffs, nil
}

// replayBase reads a replay's base URL, which must be http or https, as a directory.
func replayBase(baseURL string) (*url.URL, error) {
	base, err := url.Parse(baseURL)
	if err != nil || base.Host == "" || (base.Scheme != "https" && base.Scheme != "http") {
		return nil, fmt.Errorf("escrowtest: replay: %q is not an http or https base URL", baseURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	return base, nil
}

// newReplayer starts a replay on base with the configured HTTP client, which is made to
// hand redirects back as they are answered, and credentials.
func newReplayer(base *url.URL, cfg replayConfig) *replayer {
	r := &replayer{base: base, ids: make(map[string]string), keys: make(map[string]string), partners: make(map[string]bool)}
	hc := http.Client{Timeout: time.Minute}
	if cfg.hc != nil {
		hc = *cfg.hc
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	r.hc = &hc
	for email, key := range cfg.keys {
		r.keys[strings.ToLower(email)] = key
	}
	return r
}

// replayer is one replay's state: the ids mapped so far and the target's credentials.
type replayer struct {
	base     *url.URL
	hc       *http.Client
	ids      map[string]string // recorded id → the target's, numbers in decimal
	keys     map[string]string // e-mail → the target's key
	partners map[string]bool
	control  *ControlClient
}

// notePartners marks the accounts the recording shows to be approved partners.
func (r *replayer) notePartners(cassettes []Cassette, extra []string) {
	for _, e := range extra {
		r.partners[strings.ToLower(e)] = true
	}
	for _, c := range cassettes {
		if c.Account != "" && (c.Partner || c.AsCustomer != "" || strings.HasPrefix(c.Path, "partner/")) {
			r.partners[strings.ToLower(c.Account)] = true
		}
	}
}

// replay plays one cassette and compares the answer.
func (r *replayer) replay(ctx context.Context, c *Cassette) ([]Difference, error) {
	if c.Kind == CassetteAccount {
		return nil, r.makeAccount(ctx, c.Account)
	}
	req, err := r.request(ctx, c)
	if err != nil {
		return nil, err
	}
	resp, err := r.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("escrowtest: replaying #%d %s %s: %w", c.Seq, c.Method, c.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxCassetteFile))
	if err != nil {
		return nil, fmt.Errorf("escrowtest: replaying #%d %s %s: %w", c.Seq, c.Method, c.Path, err)
	}
	m := comparison{r: r, c: c}
	if resp.StatusCode != c.Status {
		m.add("status", strconv.Itoa(c.Status), strconv.Itoa(resp.StatusCode))
		return m.diffs, nil // the bodies of different answers say different things
	}
	if c.ResponseHeader != nil {
		m.headers(c.ResponseHeader, resp.Header)
	}
	if c.ResponseBody != nil {
		m.body(c.ResponseBody, body)
	}
	return m.diffs, nil
}

// request builds the replayed request: the recorded one with mapped ids and the target's
// credentials.
func (r *replayer) request(ctx context.Context, c *Cassette) (*http.Request, error) {
	target := r.resolve(c.Path)
	target.RawQuery = r.mapQuery(c.Query)
	body, err := r.requestBody(c)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, target.String(), body)
	if err != nil {
		return nil, fmt.Errorf("escrowtest: cassette #%d: %w", c.Seq, err)
	}
	if c.RequestBody != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.AsCustomer != "" {
		req.Header.Set("As-Customer", c.AsCustomer)
	}
	if c.Account != "" {
		key, err := r.key(ctx, c.Account)
		if err != nil {
			return nil, err
		}
		req.SetBasicAuth(c.Account, key)
	}
	return req, nil
}

// requestBody is the recorded request body, with its ids mapped when it is JSON; nil
// when there was none.
func (r *replayer) requestBody(c *Cassette) (io.Reader, error) {
	switch {
	case c.RequestBody != nil:
		mapped, err := r.mapBody(c.RequestBody)
		if err != nil {
			return nil, fmt.Errorf("escrowtest: cassette #%d: request body: %w", c.Seq, err)
		}
		return bytes.NewReader(mapped), nil
	case c.RequestText != "":
		return strings.NewReader(c.RequestText), nil
	}
	return nil, nil
}

// resolve places a recorded path on the target, with its ids mapped.
func (r *replayer) resolve(p string) *url.URL {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = r.mapID(s)
	}
	u := *r.base
	u.RawQuery, u.Fragment = "", ""
	if joined := strings.Join(segs, "/"); strings.HasPrefix(joined, "/") {
		u.Path = joined
	} else {
		u.Path += joined
	}
	u.RawPath = ""
	return &u
}

// mapID returns the target's id for a recorded one; an id never mapped is sent as it is.
func (r *replayer) mapID(id string) string {
	if to, ok := r.ids[id]; ok {
		return to
	}
	return id
}

// mapQuery maps the ids in a recorded query: any value, or comma-separated part of one,
// that is an id mapped before.
func (r *replayer) mapQuery(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil || raw == "" {
		return raw
	}
	for k, vs := range q {
		for i, v := range vs {
			parts := strings.Split(v, ",")
			for j, p := range parts {
				parts[j] = r.mapID(p)
			}
			vs[i] = strings.Join(parts, ",")
		}
		q[k] = vs
	}
	return q.Encode()
}

// mapBody maps the ids of a recorded request body: the values of id keys.
func (r *replayer) mapBody(body json.RawMessage) ([]byte, error) {
	v, err := decodeJSON(body)
	if err != nil {
		return nil, err
	}
	return json.Marshal(r.mapValue(v, ""))
}

func (r *replayer) mapValue(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = r.mapValue(e, k)
		}
	case []any:
		for i, e := range v {
			v[i] = r.mapValue(e, key)
		}
	default:
		if idKey(key) {
			return r.mapScalarID(v)
		}
	}
	return v
}

// mapScalarID maps an id given as a number or a string.
func (r *replayer) mapScalarID(v any) any {
	switch v := v.(type) {
	case json.Number:
		return json.Number(r.mapID(v.String()))
	case string:
		return r.mapID(v)
	}
	return v
}

// idKey reports whether a JSON key names an id: "id", "…_id" or "…_ids".
func idKey(key string) bool {
	return key == "id" || key == "ids" || strings.HasSuffix(key, "_id") || strings.HasSuffix(key, "_ids")
}

// key returns the target's key for an account, making the account when it has none.
func (r *replayer) key(ctx context.Context, email string) (string, error) {
	if k, ok := r.keys[strings.ToLower(email)]; ok {
		return k, nil
	}
	if err := r.makeAccount(ctx, email); err != nil {
		return "", err
	}
	return r.keys[strings.ToLower(email)], nil
}

// makeAccount makes an account on the target through its control API.
func (r *replayer) makeAccount(ctx context.Context, email string) error {
	if _, ok := r.keys[strings.ToLower(email)]; ok {
		return nil
	}
	if r.control == nil {
		c, err := NewControlClient(r.base.String(), r.hc)
		if err != nil {
			return err
		}
		r.control = c
	}
	a, err := r.control.AddCustomer(ctx, email, r.partners[strings.ToLower(email)])
	if err != nil {
		return fmt.Errorf("escrowtest: replay needs credentials for %s on the target: give them with ReplayCredentials, or replay against an emulator, whose control API makes accounts: %w", email, err)
	}
	r.keys[strings.ToLower(email)] = a.APIKey
	return nil
}

// comparison gathers the differences of one exchange.
type comparison struct {
	r     *replayer
	c     *Cassette
	diffs []Difference
}

func (m *comparison) add(field, recorded, replayed string) {
	m.diffs = append(m.diffs, Difference{Seq: m.c.Seq, Method: m.c.Method, Path: m.c.Path, Field: field, Recorded: recorded, Replayed: replayed})
}

// rateLimitHeader is the header spec part 8 says every answer carries.
const rateLimitHeader = "RateLimit-Remaining"

// headers compares what the API's headers say and every server sends alike: the media
// type, and whether the rate-limit allowance is there. Other headers are the servers' own
// (Server, request ids, caching) and would differ to no purpose.
func (m *comparison) headers(recorded, replayed http.Header) {
	if w, g := mediaType(recorded), mediaType(replayed); w != g {
		m.add("header Content-Type", cmp.Or(w, "none"), cmp.Or(g, "none"))
	}
	if w, g := recorded.Get(rateLimitHeader) != "", replayed.Get(rateLimitHeader) != ""; w != g {
		m.add("header "+rateLimitHeader, presence(w), presence(g))
	}
}

func mediaType(h http.Header) string {
	t, _, _ := strings.Cut(h.Get("Content-Type"), ";")
	return strings.ToLower(strings.TrimSpace(t))
}

func presence(present bool) string {
	if present {
		return "present"
	}
	return "missing"
}

// body compares a recorded JSON body with the replayed one.
func (m *comparison) body(recorded json.RawMessage, replayed []byte) {
	want, err := decodeJSON(recorded)
	if err != nil {
		m.add("", "unreadable JSON", "not compared")
		return
	}
	got, err := decodeJSON(replayed)
	if err != nil {
		m.add("", "JSON", "not JSON")
		return
	}
	m.value("", "", want, got)
}

// value compares two values at path, whose last key is key.
func (m *comparison) value(path, key string, want, got any) {
	if jsonType(want) != jsonType(got) {
		m.add(path, jsonType(want), jsonType(got))
		return
	}
	switch want := want.(type) {
	case map[string]any:
		m.object(path, want, got.(map[string]any))
	case []any:
		m.array(path, key, want, got.([]any))
	case bool:
		if want != got.(bool) {
			m.add(path, strconv.FormatBool(want), strconv.FormatBool(got.(bool)))
		}
	default:
		if idKey(key) {
			m.scalarID(path, want, got)
		}
	}
}

// array compares two arrays: their lengths, and the elements both have.
func (m *comparison) array(path, key string, want, got []any) {
	if len(want) != len(got) {
		m.add(path, fmt.Sprintf("%d elements", len(want)), fmt.Sprintf("%d elements", len(got)))
	}
	for i := range min(len(want), len(got)) {
		m.value(fmt.Sprintf("%s[%d]", path, i), key, want[i], got[i])
	}
}

// scalarID compares two ids of the same JSON type, given as numbers or strings.
func (m *comparison) scalarID(path string, want, got any) {
	switch want := want.(type) {
	case json.Number:
		m.id(path, want.String(), got.(json.Number).String())
	case string:
		m.id(path, want, got.(string))
	}
}

// object compares two objects' fields: those missing, extra, and the values of the rest.
func (m *comparison) object(path string, want, got map[string]any) {
	for _, k := range unionKeys(want, got) {
		field := k
		if path != "" {
			field = path + "." + k
		}
		w, inWant := want[k]
		g, inGot := got[k]
		switch {
		case !inGot || !inWant:
			m.add(field, presence(inWant), presence(inGot))
		default:
			m.value(field, k, w, g)
		}
	}
}

// unionKeys are the keys of two objects, each once, sorted.
func unionKeys(want, got map[string]any) []string {
	keys := slices.Collect(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// id learns the target's id for a recorded one, or reports one that maps twice.
func (m *comparison) id(path, want, got string) {
	if known, ok := m.r.ids[want]; ok && known != got {
		m.add(path, fmt.Sprintf("id %s (%s on the target)", want, known), "id "+got)
		return
	}
	m.r.ids[want] = got
}

// jsonType names a decoded value's JSON type.
func jsonType(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

// decodeJSON decodes one JSON value, keeping numbers exact.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}
