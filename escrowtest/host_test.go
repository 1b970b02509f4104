package escrowtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sendHost sends a request to the test server addressed, in its Host header, to host.
func sendHost(t *testing.T, srv *Server, host, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(srv.URL, versionRoot+"/")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s as %s: %v", method, path, host, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// TestForeignHostIsMisdirected: a request addressed to a name that is not a loopback one
// (as a page on another site sends it after pointing its name at 127.0.0.1) is refused with
// 421 before any route, on the API and the control API, and changes nothing; loopback
// names and addresses are served.
func TestForeignHostIsMisdirected(t *testing.T) {
	srv := newServer(t, WithUI())
	a := srv.AddCustomer("buyer@example.com")
	for _, c := range []struct{ method, path, body string }{
		{http.MethodPost, "/_emulator/customers", `{"email": "evil@example.com"}`},
		{http.MethodGet, "/_emulator/transactions", ""},
		{http.MethodGet, "/_emulator/ui/", ""},
		{http.MethodGet, "/2017-09-01/customer/me", ""},
		{http.MethodGet, "/nowhere", ""},
	} {
		for _, host := range []string{"evil.example", "evil.example:443", "localhost.evil.example", "10.0.0.1", "[2001:db8::1]:8443"} {
			status, body := sendHost(t, srv, host, c.method, c.path, c.body)
			if status != http.StatusMisdirectedRequest || !strings.Contains(body, "misdirected_request") {
				t.Errorf("%s %s with Host %s = %d %s, want 421", c.method, c.path, host, status, body)
			}
		}
	}
	if srv.hasAccount("evil@example.com") {
		t.Error("a misdirected POST /_emulator/customers made the account")
	}
	for _, host := range []string{"localhost", "LOCALHOST:8443", "app.localhost", "127.0.0.1", "127.1.2.3:99", "[::1]:8443", "localhost."} {
		if status, body := sendHost(t, srv, host, http.MethodGet, "/_emulator/transactions", ""); status != http.StatusOK {
			t.Errorf("GET /_emulator/transactions with Host %s = %d %s, want 200", host, status, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"customer/me", nil)
	req.Host = "localhost"
	req.SetBasicAuth(a.Email, a.APIKey)
	if resp, err := srv.Client().Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("GET /customer/me with Host localhost: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
}

// TestHostsServesTheNamesItIsGiven: WithHosts adds the address the emulator serves under;
// the bare handler (NewEmulator) refuses other hosts as the server does.
func TestHostsServesTheNamesItIsGiven(t *testing.T) {
	e := NewEmulator(WithHosts("192.0.2.7:8443", "Emulator.Test"))
	defer e.Close()
	for host, want := range map[string]int{
		"192.0.2.7": http.StatusOK, "192.0.2.7:1": http.StatusOK, "emulator.test": http.StatusOK, "EMULATOR.TEST:8443": http.StatusOK,
		"192.0.2.8": http.StatusMisdirectedRequest, "emulator.test.evil": http.StatusMisdirectedRequest, "": http.StatusMisdirectedRequest,
	} {
		req := httptest.NewRequest(http.MethodGet, "/_emulator/", nil)
		req.Host, req.RemoteAddr = host, "127.0.0.1:40000"
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("Host %q: %d, want %d", host, w.Code, want)
		}
	}
}
