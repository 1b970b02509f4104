package escrowtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tape records exchanges with a server as cassettes, as `escrow record` writes them.
type tape struct {
	t   *testing.T
	srv *Server
	dir string
	seq int
}

func newTape(t *testing.T, srv *Server) *tape {
	return &tape{t: t, srv: srv, dir: t.TempDir()}
}

func (tp *tape) write(c *Cassette) {
	tp.t.Helper()
	tp.seq++
	c.Seq = tp.seq
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		tp.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tp.dir, c.FileName()), b, 0o600); err != nil {
		tp.t.Fatal(err)
	}
}

// account makes an account on the server and records that it was made.
func (tp *tape) account(email string, partner bool) Account {
	a := tp.srv.addAccount(email, partner)
	tp.write(&Cassette{Kind: CassetteAccount, Account: email, Partner: partner})
	return a
}

// send makes a request as a (no credentials when a is zero) and records the exchange; it
// returns the decoded answer.
func (tp *tape) send(a Account, asCustomer, method, path, body string) map[string]any {
	tp.t.Helper()
	target := tp.srv.URL + path
	if strings.HasPrefix(path, "/") {
		target = strings.TrimSuffix(tp.srv.URL, "/2017-09-01/") + path
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		tp.t.Fatal(err)
	}
	if a.Email != "" {
		req.SetBasicAuth(a.Email, a.APIKey)
	}
	if asCustomer != "" {
		req.Header.Set("As-Customer", asCustomer)
	}
	hc := *tp.srv.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse } // as escrow record
	resp, err := hc.Do(req)
	if err != nil {
		tp.t.Fatal(err)
	}
	defer resp.Body.Close()
	respBody, _ := io.ReadAll(resp.Body)
	c := &Cassette{Kind: CassetteExchange, Account: a.Email, Method: method, Path: path, AsCustomer: asCustomer,
		Status: resp.StatusCode, ResponseHeader: resp.Header.Clone(), Started: time.Now()}
	c.SetBodies([]byte(body), respBody)
	tp.write(c)
	var out map[string]any
	json.Unmarshal(respBody, &out)
	return out
}

// recordSale records a sale on a server whose ids have moved on (a transaction made
// before), so that a replay on a fresh server must map them.
func recordSale(t *testing.T) (dir string, txID float64) {
	srv := newServer(t)
	other := srv.AddPartner("other@example.com")
	tp := newTape(t, srv)
	as(t, srv, other).must(http.StatusCreated, http.MethodPost, "transaction", saleBody("x@example.com", "y@example.com"))
	partner := tp.account("market@example.com", true)
	tx := tp.send(partner, "", "POST", "transaction", saleBody("buyer@example.com", "seller@example.com"))
	id := fmt.Sprint(tx["id"])
	tp.send(partner, "buyer@example.com", "PATCH", "transaction/"+id, `{"action":"agree"}`)
	tp.send(partner, "seller@example.com", "PATCH", "transaction/"+id, `{"action":"agree"}`)
	tp.send(Account{}, "", "POST", "/_emulator/transactions/"+id+"/approve_payment", "")
	tp.send(partner, "", "GET", "transaction/"+id, "")
	tp.send(partner, "", "GET", "partner/transactions", "")
	// A report's id is a string, and its download a redirect.
	report := tp.send(partner, "", "POST", "partner/reports", "{}")
	tp.send(partner, "", "GET", fmt.Sprintf("partner/reports/%s/download", report["task_id"]), "")
	return tp.dir, tx["id"].(float64)
}

// saleBody is a transaction creation body between buyer and seller.
func saleBody(buyer, seller string) string {
	return fmt.Sprintf(`{"currency":"usd","description":"A bicycle","parties":[{"role":"buyer","customer":%q},{"role":"seller","customer":%q}],
		"items":[{"title":"Bicycle","type":"general_merchandise","inspection_period":259200,"schedule":[{"amount":250,"payer_customer":%[1]q,"beneficiary_customer":%[2]q}]}]}`, buyer, seller)
}

func TestReplayOnAFreshEmulatorMapsIdsAndFindsNoDifference(t *testing.T) {
	dir, recordedID := recordSale(t)
	target := newServer(t)
	diffs, err := Replay(t.Context(), dir, target.URL, ReplayHTTPClient(target.Client()))
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) > 0 {
		t.Fatalf("differences on a fresh emulator:\n%s", joinDiffs(diffs))
	}
	// The replay's transaction is the target's first, which the recording's was not: its
	// actions reached it only because the id was mapped.
	const first = 200001
	if recordedID == first {
		t.Fatalf("the recording's transaction is %v, the id the target hands out first", recordedID)
	}
	p, err := target.NextSteps(first)
	if err != nil || p.State != "funded" {
		t.Errorf("the target's transaction %d: %+v, %v; want funded", first, p, err)
	}
}

func TestReplayReportsEachDifferenceWithItsExchange(t *testing.T) {
	dir, _ := recordSale(t)
	// The recorded read of the transaction (#6) is edited: a flag flipped, a field
	// dropped, a field added.
	name := filepath.Join(dir, (&Cassette{Seq: 6, Kind: CassetteExchange, Method: "GET", Path: "transaction/" + "200002"}).FileName())
	edit(t, name, func(c *Cassette, body map[string]any) {
		body["is_cancelled"] = true
		delete(body, "currency")
		body["surprise"] = 1
		c.ResponseHeader.Del("RateLimit-Remaining")
	})
	target := newServer(t)
	diffs, err := Replay(t.Context(), dir, target.URL, ReplayHTTPClient(target.Client()))
	if err != nil {
		t.Fatal(err)
	}
	got := joinDiffs(diffs)
	for _, want := range []string{
		"#6 GET transaction/200002: currency: recorded missing, replayed present",
		"#6 GET transaction/200002: is_cancelled: recorded true, replayed false",
		"#6 GET transaction/200002: surprise: recorded present, replayed missing",
		"#6 GET transaction/200002: header RateLimit-Remaining: recorded missing, replayed present",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q among the differences:\n%s", want, got)
		}
	}
	if len(diffs) != 4 {
		t.Errorf("%d differences, want 4:\n%s", len(diffs), got)
	}

	faulty := newServer(t)
	if err := faulty.InjectFault(Fault{Endpoint: "GET /transaction/{id}", Status: 500}); err != nil {
		t.Fatal(err)
	}
	diffs, err = Replay(t.Context(), dir, faulty.URL, ReplayHTTPClient(faulty.Client()))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(diffs, func(d Difference) bool { return d.Seq == 6 && d.Field == "status" && d.Replayed == "500" }) {
		t.Errorf("a fault on GET /transaction/{id}: no status difference on #6:\n%s", joinDiffs(diffs))
	}
}

// edit rewrites a cassette's response body.
func edit(t *testing.T, name string, change func(*Cassette, map[string]any)) {
	t.Helper()
	c, err := readCassette(name)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(c.ResponseBody, &body); err != nil {
		t.Fatal(err)
	}
	change(&c, body)
	c.ResponseBody, _ = json.Marshal(body)
	b, _ := json.Marshal(c)
	if err := os.WriteFile(name, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func joinDiffs(diffs []Difference) string {
	var b strings.Builder
	for _, d := range diffs {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// errorsTB records what ReplayCassettes reports.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Helper() {}
func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}

func TestReplayCassettesReportsDifferencesThroughT(t *testing.T) {
	dir, _ := recordSale(t)
	faulty := newServer(t)
	if err := faulty.InjectFault(Fault{Endpoint: "GET /partner/transactions", Status: 503}); err != nil {
		t.Fatal(err)
	}
	tb := &errorsTB{TB: t}
	ReplayCassettes(tb, dir, faulty.URL, ReplayHTTPClient(faulty.Client()))
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], "#7 GET partner/transactions: status: recorded 200, replayed 503") {
		t.Errorf("reported %q", tb.errs)
	}
}

func TestReplayWithoutCredentialsOnATargetThatMakesNoAccountsSaysHow(t *testing.T) {
	dir, _ := recordSale(t)
	sandboxLike := httptest.NewTLSServer(http.NotFoundHandler())
	defer sandboxLike.Close()
	_, err := Replay(t.Context(), dir, sandboxLike.URL+"/2017-09-01/", ReplayHTTPClient(sandboxLike.Client()))
	if err == nil || !strings.Contains(err.Error(), "market@example.com") || !strings.Contains(err.Error(), "ReplayCredentials") {
		t.Errorf("error %v; want one naming the account and ReplayCredentials", err)
	}
}

func TestReadCassettesRefusesWhatIsNotACassette(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":            "{",
		"unknown kind":        `{"seq":1,"kind":"tape"}`,
		"exchange, no status": `{"seq":1,"kind":"exchange","method":"GET","path":"transaction"}`,
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "00001-x.json"), []byte(content), 0o600)
		if _, err := ReadCassettes(dir); err == nil {
			t.Errorf("%s: read", name)
		}
	}
	if _, err := ReadCassettes(t.TempDir()); err == nil {
		t.Error("an empty directory: read")
	}
}

// The bodies keep what they were: JSON compacted, anything else as text.
func TestCassetteSetBodies(t *testing.T) {
	var c Cassette
	c.SetBodies([]byte("{ \"a\": 1 }"), []byte("<html>x</html>"))
	if !bytes.Equal(c.RequestBody, []byte(`{"a":1}`)) || c.RequestText != "" || c.ResponseBody != nil || c.ResponseText != "<html>x</html>" {
		t.Errorf("%+v", c)
	}
}
