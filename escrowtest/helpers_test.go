package escrowtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testStart is the frozen clock of every test server.
var testStart = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

// newServer starts an emulator for one test, with a frozen clock.
func newServer(t *testing.T, opts ...Option) *Server {
	t.Helper()
	srv := NewServer(append([]Option{WithClock(testStart)}, opts...)...)
	t.Cleanup(srv.Close)
	return srv
}

// client sends raw HTTP requests to a test server as one customer.
type client struct {
	t      *testing.T
	srv    *Server
	user   string
	secret string
	header http.Header
}

// as returns a client authenticated with the account's API key.
func as(t *testing.T, srv *Server, a Account) *client {
	return &client{t: t, srv: srv, user: a.Email, secret: a.APIKey, header: http.Header{}}
}

// anonymous returns a client without credentials.
func anonymous(t *testing.T, srv *Server) *client {
	return &client{t: t, srv: srv, header: http.Header{}}
}

// asCustomer returns a copy of c that sends As-Customer.
func (c *client) asCustomer(email string) *client {
	d := *c
	d.header = c.header.Clone()
	d.header.Set(asCustomerHeader, email)
	return &d
}

// reply is an answer as tests inspect it.
type reply struct {
	status int
	header http.Header
	raw    []byte
	json   any // the decoded body, when it is JSON
}

// do sends a request. body is nil, a string sent as is, or a value sent as JSON. path is
// relative to the base URL, or absolute from "/".
func (c *client) do(method, path string, body any) reply {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	url := c.srv.URL + path
	if strings.HasPrefix(path, "/") {
		url = strings.TrimSuffix(c.srv.URL, versionRoot+"/") + path
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.secret)
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	resp, err := c.srv.Client().Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out := reply{status: resp.StatusCode, header: resp.Header}
	out.raw, _ = io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(out.raw, &out.json); err != nil {
			c.t.Fatalf("%s %s: the JSON body does not decode: %v\n%s", method, path, err, out.raw)
		}
	}
	return out
}

// must sends a request and fails the test unless it answers want; it returns the body.
func (c *client) must(want int, method, path string, body any) reply {
	c.t.Helper()
	r := c.do(method, path, body)
	if r.status != want {
		c.t.Fatalf("%s %s = %d, want %d\n%s", method, path, r.status, want, r.raw)
	}
	return r
}

// get returns the value at a dotted path ("items.0.schedule.0.amount") in a JSON value,
// or nil.
func get(v any, path string) any {
	for key := range strings.SplitSeq(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			v = node[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				return nil
			}
			v = node[i]
		default:
			return nil
		}
	}
	return v
}

func (r reply) get(path string) any { return get(r.json, path) }

func (r reply) str(path string) string {
	s, _ := r.get(path).(string)
	return s
}

func (r reply) id(path string) int64 {
	f, _ := r.get(path).(float64)
	return int64(f)
}

func (r reply) list(path string) []any {
	l, _ := r.get(path).([]any)
	return l
}

// errorPaths lists the dotted paths of the message lists under "errors".
func (r reply) errorPaths() []string {
	var out []string
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if m, ok := v.(map[string]any); ok {
			for k, sub := range m {
				walk(prefix+k+".", sub)
			}
			return
		}
		out = append(out, strings.TrimSuffix(prefix, "."))
	}
	walk("", r.get("errors"))
	slices.Sort(out)
	return out
}

// world is a test server with the usual cast: buyer, seller, broker, an approved partner
// and a stranger to every transaction.
type world struct {
	t                                        *testing.T
	srv                                      *Server
	buyer, seller, broker, partner, stranger Account
	b, s, k, p, x                            *client
}

func newWorld(t *testing.T, opts ...Option) *world {
	t.Helper()
	srv := newServer(t, opts...)
	w := &world{t: t, srv: srv}
	w.buyer, w.seller, w.broker = srv.AddCustomer("buyer@example.com"), srv.AddCustomer("seller@example.com"), srv.AddCustomer("broker@example.com")
	w.partner, w.stranger = srv.AddPartner("partner@example.com"), srv.AddCustomer("stranger@example.com")
	w.b, w.s, w.k, w.p, w.x = as(t, srv, w.buyer), as(t, srv, w.seller), as(t, srv, w.broker), as(t, srv, w.partner), as(t, srv, w.stranger)
	return w
}

// accepted takes item of transaction id (0: the whole transaction) through the seller's
// shipping and the buyer's receipt and acceptance.
func (w *world) accepted(id, item int64) {
	w.s.act(http.StatusOK, id, item, action("ship"))
	w.b.act(http.StatusOK, id, item, action("receive"))
	w.b.act(http.StatusOK, id, item, action("accept"))
}

// returned takes item of transaction id through shipping and receipt, the buyer's rejection
// and return, and the seller's receipt and acceptance of the return.
func (w *world) returned(id, item int64) {
	for _, a := range []struct {
		c   *client
		act string
	}{{w.s, "ship"}, {w.b, "receive"}, {w.b, "reject"}, {w.b, "ship_return"}, {w.s, "receive_return"}, {w.s, "accept_return"}} {
		a.c.act(http.StatusOK, id, item, action(a.act))
	}
}

// body is a JSON object under construction.
type body = map[string]any

// merchandise is a valid creation body: the buyer ("me") buys a 1000.00 item.
func merchandise() body {
	return body{
		"currency":    "usd",
		"description": "A vintage guitar",
		"parties": []any{
			body{"role": "buyer", "customer": "me"},
			body{"role": "seller", "customer": "seller@example.com"},
		},
		"items": []any{body{
			"title": "Guitar", "description": "1962 Stratocaster", "type": "general_merchandise",
			"category": "collectibles", "inspection_period": 259200, "quantity": 1,
			"schedule": []any{body{"amount": 1000.0, "payer_customer": "me", "beneficiary_customer": "seller@example.com"}},
		}},
	}
}

// milestones is a valid body of a two-milestone service the buyer pays.
func milestones() body {
	b := merchandise()
	b["items"] = []any{milestoneItem("Design", 300), milestoneItem("Build", 200)}
	return b
}

func milestoneItem(title string, amount float64) body {
	return body{
		"title": title, "type": "milestone", "inspection_period": 86400,
		"schedule": []any{body{"amount": amount, "payer_customer": "me", "beneficiary_customer": "seller@example.com", "due_date": "2024-06-01T00:00:00Z"}},
	}
}

// domain is a valid body of a domain name sale by the seller to buyer@example.com.
func domain() body {
	b := merchandise()
	b["parties"] = []any{
		body{"role": "buyer", "customer": "buyer@example.com"},
		body{"role": "seller", "customer": "me"},
	}
	b["items"] = []any{body{
		"title": "example.org", "type": "domain_name", "inspection_period": 259200,
		"schedule": []any{body{"amount": "1000.00", "payer_customer": "buyer@example.com", "beneficiary_customer": "me"}},
	}}
	return b
}

// clone deep-copies a body so that a test can change it.
func clone(b body) body {
	data, _ := json.Marshal(b)
	var out body
	json.Unmarshal(data, &out)
	return out
}

// set changes the value at a dotted path of a body; nil deletes it.
func set(b body, path string, v any) body {
	keys := strings.Split(path, ".")
	var node any = b
	for _, k := range keys[:len(keys)-1] {
		node = get(node, k)
	}
	last := keys[len(keys)-1]
	switch n := node.(type) {
	case map[string]any:
		if v == nil {
			delete(n, last)
		} else {
			n[last] = v
		}
	case []any:
		i, _ := strconv.Atoi(last)
		n[i] = v
	}
	return b
}

// create posts a body as c and returns the new transaction's id.
func (c *client) create(b body) int64 {
	c.t.Helper()
	return c.must(http.StatusCreated, http.MethodPost, "transaction", b).id("id")
}

// act performs an action on a transaction (item 0 for the whole transaction).
func (c *client) act(want int, tx, item int64, b body) reply {
	c.t.Helper()
	path := "transaction/" + strconv.FormatInt(tx, 10)
	if item != 0 {
		path += "/item/" + strconv.FormatInt(item, 10)
	}
	return c.must(want, http.MethodPatch, path, b)
}

func action(name string) body { return body{"action": name} }

// funded creates the body as the buyer, has the seller agree and the payment approved.
func (w *world) funded(b body) (int64, reply) {
	w.t.Helper()
	id := w.b.create(b)
	w.s.act(http.StatusOK, id, 0, action("agree"))
	if err := w.srv.ApprovePayment(id); err != nil {
		w.t.Fatal(err)
	}
	return id, w.b.must(http.StatusOK, http.MethodGet, "transaction/"+strconv.FormatInt(id, 10), nil)
}

func txPath(id int64, rest ...string) string {
	return strings.Join(append([]string{"transaction", strconv.FormatInt(id, 10)}, rest...), "/")
}

// keys returns the sorted keys of a JSON object.
func keys(v any) []string {
	m, _ := v.(map[string]any)
	return slices.Sorted(maps.Keys(m))
}

// jsonEqual compares two decoded JSON values.
func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// withSeller makes email the seller of a merchandise or milestones body.
func withSeller(b body, email string) body {
	set(b, "parties.1.customer", email)
	for _, it := range b["items"].([]any) {
		for _, s := range it.(map[string]any)["schedule"].([]any) {
			s.(map[string]any)["beneficiary_customer"] = email
		}
	}
	return b
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// paidOut reports whether the first schedule entry of item i is disbursed, as c sees it.
func paidOut(t *testing.T, c *client, id int64, i int) bool {
	t.Helper()
	r := c.must(http.StatusOK, http.MethodGet, txPath(id), nil)
	v, ok := r.get(fmt.Sprintf("items.%d.schedule.0.status.disbursed_to_beneficiary", i)).(bool)
	if !ok {
		t.Fatalf("no item %d schedule status in %s", i, r.raw)
	}
	return v
}

// closed reports whether the transaction has a close date.
func closed(t *testing.T, c *client, id int64) bool {
	t.Helper()
	return c.must(http.StatusOK, http.MethodGet, txPath(id), nil).get("close_date") != nil
}

// refundsTo lists the amounts the partner sees paid back to a customer's card.
func refundsTo(t *testing.T, w *world, customer Account) []string {
	t.Helper()
	r := w.p.must(http.StatusOK, http.MethodGet, fmt.Sprintf("partner/customer/%d/payments_out", customer.ID), nil)
	var out []string
	for i := range r.list("payments") {
		out = append(out, r.str(fmt.Sprintf("payments.%d.amount", i)))
	}
	slices.Sort(out)
	return out
}

// byCard has the buyer choose a credit card, so that refunds show in payments_out.
func byCard(w *world, id int64) {
	w.b.must(http.StatusOK, http.MethodPost, txPath(id, "payment_methods", "credit_card"), nil)
}

// withFeeItem adds a fee item (shipping_fee or partner_fee) the buyer pays.
func withFeeItem(b body, typ, beneficiary string, amount float64) body {
	b["items"] = append(b["items"].([]any), body{"type": typ,
		"schedule": []any{body{"amount": amount, "payer_customer": "buyer@example.com", "beneficiary_customer": beneficiary}}})
	return b
}
