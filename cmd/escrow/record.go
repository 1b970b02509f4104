package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/escrowkit/escrow-go/escrowtest"
	"github.com/escrowkit/escrow-go/internal/redact"
	"github.com/escrowkit/escrow-go/webhook"
)

// "escrow record" stands between a client and the API and keeps each exchange as a
// cassette (escrowtest.Cassette), so that what the sandbox answers can be replayed against
// the emulator ("escrow conformance --cassettes") and sent with an issue. It serves plain
// HTTP on a loopback address only, which the SDK and the CLI accept, and forwards to the
// upstream over HTTPS (or plain HTTP to loopback).
//
// No credential reaches a cassette. The request's Authorization is never written: only
// the e-mail address it names. Every credential the recorder sees (the keys and passwords
// of the Authorization values that pass, the keys and passwords an answer hands out, the
// delivery secrets in webhook URLs) is learned, fields named like one are blanked, URLs
// are masked (webhook.MaskURL), and the SDK's redactor removes every form of the
// credentials from the file's text. Then, before each write, a last check looks for any
// of them in the text, raw or JSON-escaped, and refuses to write a file that still holds
// one: the exchange is forwarded but not kept, and stderr says so.

// recordMaxRequest and recordMaxResponse bound what the recorder holds of one exchange.
const (
	recordMaxRequest  = 8 << 20
	recordMaxResponse = 16 << 20
)

// runRecord is "escrow record --upstream URL --out DIR [--addr host:port]".
func runRecord(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow record"
	fs := newFlagSet(name, name+" --upstream URL --out DIR [--addr 127.0.0.1:0] [--ca-cert file]\n\n"+
		"Point the SDK or the CLI at the address printed first (plain HTTP on loopback); every exchange is\n"+
		"forwarded to URL and kept as a cassette in DIR, without credentials. SIGINT or SIGTERM stops it.", stderr)
	upstream := fs.String("upstream", "", "the API's base `URL` to forward to, with its version segment (the sandbox's, or an emulator's)")
	out := fs.String("out", "", "the `directory` the cassettes are written to (made if missing)")
	addr := fs.String("addr", "127.0.0.1:0", "the loopback `host:port` to listen on (port 0 picks a free one)")
	caCert := fs.String("ca-cert", "", "also trust the upstream's PEM certificates in `file` (default $"+envCACert+")")
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	up, err := checkRecordFlags(*upstream, *out, *addr)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	transport, err := newTransport(orEnv(*caCert, envCACert))
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer transport.CloseIdleConnections()
	if err := outDir(*out); err != nil {
		return exitCode(stderr, name, err)
	}
	rec := newRecorder(up, *out, &http.Client{Transport: transport, Timeout: 2 * time.Minute, CheckRedirect: keepRedirect}, stderr)
	return exitCode(stderr, name, serveRecorder(ctx, rec, *addr, stdout, stderr))
}

// keepRedirect hands a redirect to the client, as the upstream sent it.
func keepRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// checkRecordFlags checks the flags and returns the upstream's base URL.
func checkRecordFlags(upstream, out, addr string) (*url.URL, error) {
	if upstream == "" || out == "" {
		return nil, usagef("--upstream URL and --out DIR are both needed")
	}
	u, err := url.Parse(upstream)
	if err != nil || !safeUpstream(u) {
		return nil, usagef("--upstream %q is not an https URL (or http on a loopback address)", upstream)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawQuery, u.Fragment, u.RawPath = "", "", ""
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !isLoopback(host) {
		return nil, usagef("--addr %q is not a loopback host:port: the recorder serves plain HTTP, which only this machine may reach", addr)
	}
	return u, nil
}

// safeUpstream reports whether a URL names a server the recorder may forward to: over
// HTTPS, or plain HTTP to this machine.
func safeUpstream(u *url.URL) bool {
	switch {
	case u.Host == "":
		return false
	case u.Scheme == "https":
		return true
	}
	return u.Scheme == "http" && isLoopback(u.Hostname())
}

// hostOnly is a Host header's name or address, without its port or brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// outDir makes the cassettes' directory, which must hold no cassette yet: two recordings
// in one directory would replay as one.
func outDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if held, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(held) > 0 {
		return usagef("--out %s already holds %d cassettes: record into a new directory", dir, len(held))
	}
	return nil
}

// serveRecorder serves rec on addr until ctx ends, printing its base URL first on stdout.
func serveRecorder(ctx context.Context, rec *recorder, addr string, stdout, stderr io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "http://%s%s\n", ln.Addr(), rec.upstream.Path)
	if hint := versionHint(rec.upstream.String()); hint != "" {
		fmt.Fprintf(stderr, "escrow record: warning: --upstream: %s\n", hint)
	}
	fmt.Fprintf(stderr, "escrow record: forwarding to %s, writing cassettes to %s\n", rec.upstream, rec.dir)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	written, refused := rec.counts()
	fmt.Fprintf(stderr, "escrow record: %d cassettes written to %s, %d refused\n", written, rec.dir, refused)
	return err
}

// recorder is the proxy: it forwards each request and keeps the exchange.
type recorder struct {
	upstream *url.URL
	dir      string
	hc       *http.Client
	stderr   io.Writer

	mu               sync.Mutex // orders the cassettes and guards what follows
	seq              int
	written, refused int
	guard            credentialGuard
	stderrMu         sync.Mutex
}

func newRecorder(upstream *url.URL, dir string, hc *http.Client, stderr io.Writer) *recorder {
	return &recorder{upstream: upstream, dir: dir, hc: hc, stderr: stderr}
}

func (rec *recorder) counts() (written, refused int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.written, rec.refused
}

// hopHeaders are a connection's own headers, not forwarded; Accept-Encoding is left to
// the forwarding transport, so that answers are recorded as text.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Accept-Encoding"}

// ServeHTTP forwards one request and records the exchange. A request that names another
// host than this machine is refused before anything is forwarded: a page in a browser that
// rebinds its own name to 127.0.0.1 must not reach the upstream (an emulator's control API
// hands out keys) through the recorder, which sends the upstream's own Host.
func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isLoopback(hostOnly(r.Host)) {
		http.Error(w, "escrow record: this recorder answers requests for a loopback address only", http.StatusMisdirectedRequest)
		return
	}
	reqBody, err := io.ReadAll(http.MaxBytesReader(w, r.Body, recordMaxRequest))
	if err != nil {
		http.Error(w, "escrow record: request body over 8 MiB", http.StatusRequestEntityTooLarge)
		return
	}
	out, err := rec.forward(r, reqBody)
	if err != nil {
		http.Error(w, "escrow record: "+err.Error(), http.StatusBadRequest)
		return
	}
	started := time.Now()
	resp, err := rec.hc.Do(out)
	if err != nil {
		rec.logf("escrow record: %s %s: %v", r.Method, r.URL.Path, err)
		http.Error(w, "escrow record: the upstream did not answer", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(io.LimitReader(resp.Body, recordMaxResponse+1))
	elapsed := time.Since(started)
	if err != nil || len(respBody) > recordMaxResponse {
		http.Error(w, "escrow record: the upstream's answer was cut off or over 16 MiB", http.StatusBadGateway)
		return
	}
	copyAnswer(w, resp, respBody)
	rec.keep(exchange{req: r, reqBody: reqBody, resp: resp, respBody: respBody, started: started, elapsed: elapsed})
}

// forward is the request to send the upstream for r: the same method, path, query, body
// and headers, less the connection's own.
func (rec *recorder) forward(r *http.Request, body []byte) (*http.Request, error) {
	target := *rec.upstream
	target.Path, target.RawPath, target.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	out.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	return out, nil
}

// copyAnswer writes the upstream's answer to the client; its body was read whole, so
// the length is the server's to set.
func copyAnswer(w http.ResponseWriter, resp *http.Response, body []byte) {
	for k, vs := range resp.Header {
		if k != "Content-Length" {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	w.Write(body)
}

// exchange is what ServeHTTP hands keep.
type exchange struct {
	req               *http.Request
	reqBody, respBody []byte
	resp              *http.Response
	started           time.Time
	elapsed           time.Duration
}

// logf writes one line to stderr; handlers run at once.
func (rec *recorder) logf(format string, args ...any) {
	rec.stderrMu.Lock()
	defer rec.stderrMu.Unlock()
	fmt.Fprintf(rec.stderr, format+"\n", args...)
}

// keep writes the exchange as the next cassette, or refuses to when a credential would
// reach the file.
func (rec *recorder) keep(x exchange) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	email := rec.guard.learnAuthorization(x.req)
	c, ok := rec.cassette(x, email)
	if !ok {
		return
	}
	rec.seq++
	c.Seq = rec.seq
	// The path names the file and the log line too, not only the cassette: a key put in a
	// path by mistake (transaction/reference/KEY) must reach neither.
	c.Path, c.Query = rec.guard.text(c.Path), rec.guard.text(c.Query)
	data, err := rec.guard.encode(c)
	if err == nil {
		err = writeNew(filepath.Join(rec.dir, c.FileName()), data)
	}
	if err != nil {
		rec.refused++
		rec.logf("escrow record: #%d %s %s not written: %v", c.Seq, c.Method, c.Path, err)
		return
	}
	rec.written++
}

// cassette builds the cassette of an exchange; ok is false for one not kept (an account
// the control API refused to make).
func (rec *recorder) cassette(x exchange, email string) (c *escrowtest.Cassette, ok bool) {
	path := x.req.URL.Path
	rel, inBase := strings.CutPrefix(path, rec.upstream.Path)
	if !inBase {
		rel = path
	}
	if x.req.Method == http.MethodPost && path == "/_emulator/customers" {
		return rec.accountCassette(x)
	}
	c = &escrowtest.Cassette{
		Kind: escrowtest.CassetteExchange, Account: email, Method: x.req.Method, Path: rel,
		Query: x.req.URL.RawQuery, AsCustomer: x.req.Header.Get("As-Customer"),
		Status: x.resp.StatusCode, ResponseHeader: recordedHeader(x.resp.Header),
		Started: x.started.UTC(), Duration: float64(x.elapsed.Microseconds()) / 1000,
	}
	c.SetBodies(rec.guard.scrubBody(email, x.reqBody), rec.guard.scrubBody(email, x.respBody))
	return c, true
}

// accountCassette keeps an account the emulator's control API made, without the
// credentials its answer holds (which the guard learns, should they appear elsewhere).
func (rec *recorder) accountCassette(x exchange) (*escrowtest.Cassette, bool) {
	var in struct {
		Email   string `json:"email"`
		Partner bool   `json:"partner"`
	}
	if x.resp.StatusCode/100 != 2 || json.Unmarshal(x.reqBody, &in) != nil {
		return nil, false
	}
	rec.guard.scrubBody(in.Email, x.respBody)
	return &escrowtest.Cassette{Kind: escrowtest.CassetteAccount, Account: in.Email, Partner: in.Partner, Started: x.started.UTC()}, true
}

// connectionHeaders are an answer's headers that describe its connection, not the API.
var connectionHeaders = []string{"Date", "Content-Length", "Connection", "Keep-Alive", "Transfer-Encoding", "Set-Cookie"}

func recordedHeader(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range connectionHeaders {
		out.Del(k)
	}
	return out
}

// writeNew writes a file that must not exist yet, readable by its owner only.
func writeNew(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// credentialGuard keeps credentials out of cassettes: it learns each one it sees, removes
// them from what is written, and refuses a file that still holds one.
type credentialGuard struct {
	seen      map[string]bool // the credentials learned, by e-mail and secret
	redactors []*redact.Redactor
	// secrets are the texts no file may hold: keys, passwords, Authorization values and
	// their tokens, delivery secrets.
	secrets []string
	// full is set once a credential could not be kept (maxGuarded).
	full bool
}

// learnAuthorization learns the request's Basic credentials and returns the e-mail
// address they name ("" without any).
func (g *credentialGuard) learnAuthorization(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return ""
	}
	g.addSecret(auth)
	if token, ok := strings.CutPrefix(auth, "Basic "); ok {
		g.addSecret(strings.TrimSpace(token))
	}
	email, password, ok := r.BasicAuth()
	if !ok {
		return ""
	}
	g.learn(email, password)
	return email
}

// maxGuarded bounds the credentials a guard keeps, and so the work of each write: a
// recording of a flow has a handful. Past it the guard cannot vouch for a file, and every
// later cassette is refused (the exchanges are still forwarded).
const maxGuarded = 4096

// learn adds a credential: its redactor and its text.
func (g *credentialGuard) learn(email, secret string) {
	if secret == "" || g.seen[email+"\x00"+secret] || !g.room() {
		return
	}
	g.seen[email+"\x00"+secret] = true
	g.redactors = append(g.redactors, redact.New(email, secret))
	g.addSecret(secret)
}

func (g *credentialGuard) addSecret(s string) {
	if len(s) >= 4 && !g.seen["\x00"+s] && g.room() {
		g.seen["\x00"+s] = true
		g.secrets = append(g.secrets, s)
	}
}

// room reports whether one more credential may be kept, and marks the guard full when not.
func (g *credentialGuard) room() bool {
	if g.seen == nil {
		g.seen = make(map[string]bool)
	}
	if len(g.seen) >= maxGuarded {
		g.full = true
	}
	return !g.full
}

// secretFields are the JSON fields whose values are credentials wherever they appear.
var secretFields = map[string]bool{"api_key": true, "key": true, "password": true, "token": true, "secret": true, "authorization": true}

// scrubBody learns and blanks the credentials a JSON body holds (fields named like one,
// delivery secrets in URLs) and returns it; a body that is not JSON is returned as it is
// (encode redacts every text).
func (g *credentialGuard) scrubBody(email string, body []byte) []byte {
	// Numbers are kept as they were written (1000.0 stays 1000.0, ids past 2^53 exact).
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if len(body) == 0 || dec.Decode(&v) != nil || dec.More() {
		return body
	}
	v = g.scrubValue(email, "", v)
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

func (g *credentialGuard) scrubValue(email, key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		owner := email
		if e, ok := v["email"].(string); ok {
			owner = e // a control API account: its key goes with its own address
		}
		for k, e := range v {
			v[k] = g.scrubValue(owner, k, e)
		}
	case []any:
		for i, e := range v {
			v[i] = g.scrubValue(email, key, e)
		}
	case string:
		return g.scrubString(email, key, v)
	}
	return v
}

func (g *credentialGuard) scrubString(email, key, s string) string {
	if secretFields[strings.ToLower(key)] && s != "" {
		g.learn(email, s)
		return redact.Redacted
	}
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return s
	}
	masked := webhook.MaskURL(s)
	if masked != s {
		was, now := strings.Split(s, "/"), strings.Split(masked, "/")
		for i := range min(len(was), len(now)) {
			if was[i] != now[i] {
				g.addSecret(was[i])
			}
		}
	}
	return masked
}

// text returns s with every credential learned so far removed.
func (g *credentialGuard) text(s string) string {
	for _, r := range g.redactors {
		s = r.String(s)
	}
	for _, secret := range g.secrets {
		s = strings.ReplaceAll(s, secret, redact.Redacted)
	}
	return s
}

// errTooManyCredentials refuses every cassette once the guard is full.
var errTooManyCredentials = fmt.Errorf("more than %d credentials went through the recorder: it can no longer vouch that a file holds none; nothing was written", maxGuarded)

// errHoldsCredential refuses a cassette that would still hold a credential.
var errHoldsCredential = errors.New("it would still hold a credential after redaction; nothing was written")

// encode returns the cassette's file: its JSON with every credential learned so far
// redacted, checked to hold none.
func (g *credentialGuard) encode(c *escrowtest.Cassette) ([]byte, error) {
	if g.full {
		return nil, errTooManyCredentials
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	for _, r := range g.redactors {
		data = r.Bytes(data)
	}
	if !json.Valid(data) {
		return nil, errHoldsCredential // redaction cut across the JSON: a credential was in its structure
	}
	if g.holds(data) {
		return nil, errHoldsCredential
	}
	return append(data, '\n'), nil
}

// holds reports whether data holds a secret, as it is or JSON-escaped.
func (g *credentialGuard) holds(data []byte) bool {
	for _, s := range g.secrets {
		quoted, _ := json.Marshal(s)
		if bytes.Contains(data, []byte(s)) || bytes.Contains(data, quoted[1:len(quoted)-1]) {
			return true
		}
	}
	return false
}
