package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/internal/logtest"
	"github.com/escrowkit/escrow-go/webhook"
)

// Two secrets as a rotation has them: the new one current, the old one still accepted.
var (
	newSecret = "n3wN3wN3wN3wN3wN3wN3wN3wN3wN3wN3wN3wN3wN3wN"
	oldSecret = "o1d_o1d_o1d_o1d_o1d_o1d_o1d-o1d-o1d-o1d-o1"
)

// countingStore counts every call a Handler makes to its Store.
// countingStore counts the calls about transactions: not the never-seen ids' listing's
// lease (a negative id) nor the ids owed a look, which the first never-seen id since the
// start looks at once.
type countingStore struct {
	webhook.MemoryStore
	calls atomic.Int64
}

func (s *countingStore) Handed(ctx context.Context, id int64) (map[string]bool, error) {
	s.calls.Add(1)
	return s.MemoryStore.Handed(ctx, id)
}

func (s *countingStore) Acquire(ctx context.Context, l webhook.Lease, names []escrow.EventName, now time.Time) (webhook.Turn, error) {
	if l.TransactionID > 0 {
		s.calls.Add(1)
	}
	return s.MemoryStore.Acquire(ctx, l, names, now)
}

func (s *countingStore) Yield(ctx context.Context, y webhook.Yield) (webhook.Turn, error) {
	if y.TransactionID > 0 {
		s.calls.Add(1)
	}
	return s.MemoryStore.Yield(ctx, y)
}

func (s *countingStore) Track(ctx context.Context, ids []int64) error {
	s.calls.Add(1)
	return s.MemoryStore.Track(ctx, ids)
}

func (s *countingStore) Finish(ctx context.Context, id int64) error {
	s.calls.Add(1)
	return s.MemoryStore.Finish(ctx, id)
}

// post sends one delivery of event about id to target (a path, with the secret or not)
// and returns the status.
func post(h http.Handler, target, event string, id int64) int {
	body := fmt.Sprintf(`{"event": %q, "event_type": "transaction", "transaction_id": %d}`, event, id)
	req := httptest.NewRequest(http.MethodPost, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestDeliveryNeedsASecret: with Secrets, only a delivery whose URL ends in the current
// or the rotated-out secret is taken; every other one is answered 404, counted, costs no
// API call nor store access, and neither the secrets nor what was sent are logged.
func TestDeliveryNeedsASecret(t *testing.T) {
	api := newFakeAPI()
	api.txs[200001] = created(200001)
	api.txs[200002] = created(200002)
	store := &countingStore{}
	var logs logtest.Lines
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{
		Store: store, Secrets: []string{newSecret, oldSecret},
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	defer shutdown(t, h)

	refused := []string{
		"/escrow",  // no secret
		"/escrow/", // an empty one
		"/escrow/" + newSecret[:len(newSecret)-1], // a prefix of the secret
		"/escrow/" + newSecret + "x",              // the secret and more
		"/escrow/" + newSecret + "/",              // not the last segment
		"/escrow/" + strings.ToUpper(newSecret),
		"/escrow?secret=" + newSecret, // a query is not the path
		"/escrow/" + newSecret + "," + oldSecret,
		"/" + oldSecret + "/escrow",
	}
	for i, target := range refused {
		if code := post(h, target, "create", int64(900000+i)); code != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", target, code)
		}
	}
	if n := h.Stats().Refused; n != int64(len(refused)) {
		t.Errorf("Stats().Refused = %d, want %d", n, len(refused))
	}
	if n := store.calls.Load(); n != 0 {
		t.Errorf("refused deliveries made %d store calls", n)
	}
	for i := range refused {
		if n := api.readsOf(int64(900000 + i)); n != 0 {
			t.Errorf("a refused delivery cost %d fetches", n)
		}
	}

	if code := post(h, "/escrow/"+newSecret, "create", 200001); code != http.StatusOK {
		t.Errorf("current secret: %d", code)
	}
	if code := post(h, "/hooks/escrow/"+oldSecret, "create", 200002); code != http.StatusOK {
		t.Errorf("rotated-out secret: %d", code)
	}
	flushed(t, h)
	if l := got.list(); len(l) != 2 {
		t.Errorf("handed over %v, want both creates", l)
	}
	out := logs.String()
	if !strings.Contains(out, "refused deliveries without a valid secret") {
		t.Errorf("no warning about the refusals:\n%s", out)
	}
	if strings.Count(out, "refused deliveries without a valid secret") != 1 {
		t.Errorf("refusals warned about more than once a minute:\n%s", out)
	}
	for _, s := range []string{newSecret[:12], oldSecret[:12], strings.ToUpper(newSecret)[:12]} {
		if strings.Contains(out, s) {
			t.Errorf("a secret, or what was sent for one, is in the log:\n%s", out)
		}
	}
}

// TestRefusalHappensBeforeTheBodyIsRead: a refused delivery is answered without reading
// its body, so a forger cannot make the handler wait for one.
func TestRefusalHappensBeforeTheBodyIsRead(t *testing.T) {
	h := webhook.NewHandler(newFakeAPI().client(t), (&calls{}).fn, webhook.Options{Secrets: []string{newSecret}})
	defer shutdown(t, h)
	body := &neverEnding{}
	req := httptest.NewRequest(http.MethodPost, "/escrow/wrong", body)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler waited for the body of a refused delivery")
	}
	if rec.Code != http.StatusNotFound || body.reads.Load() != 0 {
		t.Errorf("status %d after %d reads of the body", rec.Code, body.reads.Load())
	}
}

// neverEnding is a body that blocks for good once read.
type neverEnding struct{ reads atomic.Int64 }

func (b *neverEnding) Read([]byte) (int, error) {
	b.reads.Add(1)
	select {} // a slow sender's body never arrives
}

// TestFloodWithoutTheSecretCostsNothing: thousands of forged deliveries of distinct
// made-up ids, over HTTP, none with the secret: no API call, no store call, no goroutine
// left, and the real delivery sent during the flood is handed over.
func TestFloodWithoutTheSecretCostsNothing(t *testing.T) {
	api := newFakeAPI()
	api.txs[200001] = created(200001)
	store := &countingStore{}
	got := &calls{}
	h := webhook.NewHandler(api.client(t), got.fn, webhook.Options{Store: store, Secrets: []string{newSecret}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer shutdown(t, h)
	before := runtime.NumGoroutine()

	const forged = 2000
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	defer hc.CloseIdleConnections()
	var next, not404 atomic.Int64
	done := make(chan struct{})
	for range 16 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := next.Add(1); i <= forged; i = next.Add(1) {
				body := fmt.Sprintf(`{"event": "create", "event_type": "transaction", "transaction_id": %d}`, 500000+i)
				resp, err := hc.Post(srv.URL+"/escrow/guess"+fmt.Sprint(i), "application/json", strings.NewReader(body))
				if err != nil {
					not404.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body) // so that the connection is reused
				resp.Body.Close()
				if resp.StatusCode != http.StatusNotFound {
					not404.Add(1)
				}
			}
		}()
	}
	real, err := hc.Post(srv.URL+"/escrow/"+newSecret, "application/json",
		strings.NewReader(`{"event": "create", "event_type": "transaction", "transaction_id": 200001}`))
	if err != nil || real.StatusCode != http.StatusOK {
		t.Fatalf("the real delivery: %v %v", real, err)
	}
	real.Body.Close()
	for range 16 {
		<-done
	}
	flushed(t, h)
	if not404.Load() != 0 || h.Stats().Refused != forged {
		t.Errorf("%d forgeries not answered 404; Refused = %d", not404.Load(), h.Stats().Refused)
	}
	api.mu.Lock()
	fetches := 0
	for id, n := range api.reads {
		if id != 200001 {
			fetches += n
		}
	}
	api.mu.Unlock()
	if fetches != 0 {
		t.Errorf("forgeries cost %d fetches", fetches)
	}
	// The real delivery's confirmation: a lease taken and yielded, nothing per forgery.
	if n := store.calls.Load(); n > 4 {
		t.Errorf("%d store calls for one real delivery among %d forgeries", n, forged)
	}
	if l := got.list(); len(l) != 1 || l[0] != "create:200001" {
		t.Errorf("handed over %v", l)
	}
	hc.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Errorf("%d goroutines after the flood, %d before", n, before)
	}
}

// TestUnusableSecretsKeepTheDoorShut: a secret too short or with characters a URL path
// would change is never accepted, and when no secret is usable every delivery is refused
// (failing open would accept forgeries); DeliveryURL says why.
func TestUnusableSecretsKeepTheDoorShut(t *testing.T) {
	api := newFakeAPI()
	for _, secrets := range [][]string{{"short"}, {newSecret + "/x"}, {strings.Repeat("a", 129)}, {""}} {
		var logs logtest.Lines
		h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Secrets: secrets, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		for _, target := range []string{"/escrow", "/escrow/" + secrets[0]} {
			if code := post(h, target, "create", 200001); code != http.StatusNotFound {
				t.Errorf("secrets %q: %s answered %d", secrets, target, code)
			}
		}
		if _, err := h.DeliveryURL("https://shop.example/escrow"); !errors.Is(err, webhook.ErrSecret) {
			t.Errorf("secrets %q: DeliveryURL error %v", secrets, err)
		}
		if !strings.Contains(logs.String(), "never accepted") || (len(secrets[0]) > 3 && strings.Contains(logs.String(), secrets[0][:4])) {
			t.Errorf("secrets %q: log\n%s", secrets, logs.String())
		}
		shutdown(t, h)
	}
	// An unusable old secret does not shut out the current one.
	h := webhook.NewHandler(api.client(t), (&calls{}).fn, webhook.Options{Secrets: []string{newSecret, "short"}})
	defer shutdown(t, h)
	if code := post(h, "/escrow/"+newSecret, "create", 200001); code != http.StatusOK {
		t.Errorf("current secret beside an unusable old one: %d", code)
	}
	if code := post(h, "/escrow/short", "create", 200001); code != http.StatusNotFound {
		t.Errorf("the unusable secret: %d", code)
	}
}

func TestDeliveryURL(t *testing.T) {
	h := webhook.NewHandler(newFakeAPI().client(t), (&calls{}).fn, webhook.Options{Secrets: []string{newSecret, oldSecret}})
	defer shutdown(t, h)
	for base, want := range map[string]string{
		"https://shop.example/escrow/webhook":     "https://shop.example/escrow/webhook/" + newSecret,
		"https://shop.example/escrow/webhook/":    "https://shop.example/escrow/webhook/" + newSecret,
		"https://shop.example":                    "https://shop.example/" + newSecret,
		"http://127.0.0.1:8080/":                  "http://127.0.0.1:8080/" + newSecret,
		"https://shop.example/hooks?tenant=7":     "https://shop.example/hooks/" + newSecret + "?tenant=7",
		"https://shop.example/a%2Fb/escrow":       "https://shop.example/a%2Fb/escrow/" + newSecret,
		"https://shop.example/escrow%20hooks/in/": "https://shop.example/escrow%20hooks/in/" + newSecret,
	} {
		got, err := h.DeliveryURL(base)
		if err != nil || got != want {
			t.Errorf("DeliveryURL(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	for _, base := range []string{"", "shop.example/escrow", "ftp://shop.example/", "https://shop.example/x#frag", "https:///x", ":"} {
		if got, err := h.DeliveryURL(base); err == nil {
			t.Errorf("DeliveryURL(%q) = %q, want an error", base, got)
		}
	}
	none := webhook.NewHandler(newFakeAPI().client(t), (&calls{}).fn, webhook.Options{})
	defer shutdown(t, none)
	if _, err := none.DeliveryURL("https://shop.example/"); !errors.Is(err, webhook.ErrSecret) {
		t.Errorf("without secrets: %v", err)
	}
}

// TestDeliveryURLReachesTheHandler: what DeliveryURL returns, registered with the
// emulator, brings its deliveries through the door of a handler mounted on the base path.
func TestDeliveryURLReachesTheHandler(t *testing.T) {
	w := newWorld(t, webhook.Options{Secrets: []string{webhook.NewSecret()}})
	mux := http.NewServeMux()
	mux.Handle("/shop/escrow/", w.h)
	shop := httptest.NewServer(mux)
	defer shop.Close()
	hooks, err := w.partner.Webhooks.List(t.Context(), escrow.Me)
	if err != nil {
		t.Fatal(err)
	}
	for _, hk := range hooks.Webhooks { // newWorld's plain URL: refused from now on
		if err := w.partner.Webhooks.Delete(t.Context(), escrow.Me, hk.ID); err != nil {
			t.Fatal(err)
		}
	}
	u, err := w.h.DeliveryURL(shop.URL + "/shop/escrow")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.partner.Webhooks.Create(t.Context(), escrow.Me, u); err != nil {
		t.Fatal(err)
	}
	id := w.create()
	w.settle()
	if got := w.got.byTransaction()[id]; len(got) != 1 || got[0] != "create" {
		t.Errorf("handed over %v", got)
	}
	if n := w.h.Stats().Refused; n != 0 {
		t.Errorf("%d deliveries refused", n)
	}
}

func TestNewSecret(t *testing.T) {
	a, b := webhook.NewSecret(), webhook.NewSecret()
	if a == b || len(a) != 43 {
		t.Errorf("NewSecret: %q, %q", a, b)
	}
	if got, err := webhook.ParseSecrets(a + ", " + b); err != nil || len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("ParseSecrets = %q, %v", got, err)
	}
	for _, bad := range []string{"", a + ",", "short," + a, a + ",/" + b} {
		if _, err := webhook.ParseSecrets(bad); !errors.Is(err, webhook.ErrSecret) {
			t.Errorf("ParseSecrets(%q) = %v, want ErrSecret", bad, err)
		}
	}
}

// TestSharedSecrets: the first call keeps a new secret in the store, later calls (other
// replicas) get the same; a store without Settings, or an unusable kept value, is an error.
func TestSharedSecrets(t *testing.T) {
	ctx := t.Context()
	s := new(webhook.MemoryStore)
	a, err := webhook.SharedSecrets(ctx, s)
	if err != nil || len(a) != 1 {
		t.Fatalf("SharedSecrets = %v, %v", a, err)
	}
	if b, err := webhook.SharedSecrets(ctx, s); err != nil || len(b) != 1 || b[0] != a[0] {
		t.Errorf("again: %v, %v; want %v", b, err, a)
	}
	if err := s.PutSetting(ctx, webhook.SecretsSetting, newSecret+","+oldSecret); err != nil {
		t.Fatal(err)
	}
	if b, err := webhook.SharedSecrets(ctx, s); err != nil || len(b) != 2 || b[0] != newSecret || b[1] != oldSecret {
		t.Errorf("after a rotation: %v, %v", b, err)
	}
	if err := s.PutSetting(ctx, webhook.SecretsSetting, "short"); err != nil {
		t.Fatal(err)
	}
	if _, err := webhook.SharedSecrets(ctx, s); !errors.Is(err, webhook.ErrSecret) {
		t.Errorf("an unusable kept secret: %v", err)
	}
	if _, err := webhook.SharedSecrets(ctx, storeWithoutSettings{s}); !errors.Is(err, webhook.ErrNoSettings) {
		t.Errorf("a store without settings: %v", err)
	}
}

// storeWithoutSettings hides MemoryStore's Settings.
type storeWithoutSettings struct{ webhook.Store }

// TestSecretLengthEdges: a secret of 22 to 128 characters is usable, one character fewer
// or more is refused with ErrSecret, from a list and at the door alike.
func TestSecretLengthEdges(t *testing.T) {
	for n, usable := range map[int]bool{21: false, 22: true, 128: true, 129: false} {
		s := strings.Repeat("a", n)
		_, err := webhook.ParseSecrets(s)
		if usable != (err == nil) || (err != nil && !errors.Is(err, webhook.ErrSecret)) {
			t.Errorf("ParseSecrets of %d characters: %v", n, err)
		}
		h := webhook.NewHandler(newFakeAPI().client(t), (&calls{}).fn, webhook.Options{Secrets: []string{s}, Logger: slog.New(slog.DiscardHandler)})
		if code := post(h, "/escrow/"+s, "made_up_event", 1); (code != http.StatusNotFound) != usable {
			t.Errorf("a delivery with a secret of %d characters answered %d", n, code)
		}
		shutdown(t, h)
	}
}

// TestRefusalsWarnedOncePerMinute: a flood of refused deliveries logs one warning a
// minute, whatever its length: none more within the minute, the next as soon as it has
// passed.
func TestRefusalsWarnedOncePerMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs logtest.Lines
		h := webhook.NewHandler(newFakeAPI().client(t), (&calls{}).fn, webhook.Options{
			Secrets: []string{newSecret}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		})
		defer shutdown(t, h)
		start := time.Now()
		warnings := func() int { return strings.Count(logs.String(), "refused deliveries without a valid secret") }
		for _, step := range []struct {
			after time.Duration
			want  int
		}{{0, 1}, {time.Second, 1}, {59 * time.Second, 1}, {time.Minute, 2}, {119 * time.Second, 2}, {2 * time.Minute, 3}} {
			time.Sleep(time.Until(start.Add(step.after)))
			post(h, "/escrow/forged", "create", 1)
			if got := warnings(); got != step.want {
				t.Errorf("%v into the flood: %d warnings, want %d", step.after, got, step.want)
			}
		}
	})
}

// TestMaskURLHidesSecretShapedSegments: a URL DeliveryURL made shows its base with
// SECRET in the secret's place, query kept, whatever the secret, and so does a secret
// anywhere in the path, words and all; a path's short words, a segment too short to be a
// secret, the host and a URL with no path are shown as they are.
func TestMaskURLHidesSecretShapedSegments(t *testing.T) {
	for range 20 {
		secret := webhook.NewSecret()
		h := webhook.NewHandler(nil, nil, webhook.Options{Secrets: []string{secret}})
		for _, base := range []string{"https://shop.example/escrow/webhook", "https://shop.example/escrow/webhook/?shop=7"} {
			u, err := h.DeliveryURL(base)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Replace(u, secret, "SECRET", 1)
			if got := webhook.MaskURL(u); got != want || strings.Contains(got, secret) {
				t.Errorf("MaskURL(%q) = %q, want %q", u, got, want)
			}
		}
	}
	for _, u := range []string{
		"https://shop.example/escrow/webhook",
		"https://shop.example/escrow/Ab3defghijklmnopqrstu",  // 21 characters
		"https://shop.example/escrow/Ab3defghijklmnopqrs.uv", // a '.': no secret has one
		"https://shop.example",
		"https://shop.example/?k=Ab3defghijklmnopqrstuvwxyz",
		"",
	} {
		if got := webhook.MaskURL(u); got != u {
			t.Errorf("MaskURL(%q) = %q, want it unchanged", u, got)
		}
	}
	for u, want := range map[string]string{
		"https://shop.example/hooks/Ab3defghijklmnopqrstuv":        "https://shop.example/hooks/SECRET", // 22: the shortest
		"https://shop.example/hooks/transaction-notifications_end": "https://shop.example/hooks/SECRET", // words can be a secret
		"https://shop.example/hooks/abcdefghijklmnopqrstuvwxyz0#x": "https://shop.example/hooks/SECRET#x",
		"http://127.0.0.1:8080/" + strings.Repeat("A", 128):        "http://127.0.0.1:8080/SECRET",
		"http://127.0.0.1:8080/" + strings.Repeat("A", 129):        "http://127.0.0.1:8080/" + strings.Repeat("A", 129),
		"https://shop.example/hooks/Ab3defghijklmnopqrstuv/":       "https://shop.example/hooks/SECRET/",
		"https://shop.example/Ab3defghijklmnopqrstuv/hooks?x=1":    "https://shop.example/SECRET/hooks?x=1",
		"https://Ab3defghijklmnopqrstuv.example/hooks":             "https://Ab3defghijklmnopqrstuv.example/hooks", // a host is no secret
	} {
		if got := webhook.MaskURL(u); got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", u, got, want)
		}
	}
}

// TestMaskURLHidesEverySecretParseSecretsAccepts: every shape of secret ParseSecrets
// accepts (generated, words joined by hyphens, lower-case letters alone, digits alone,
// '-' and '_' alone) is masked in a URL's path: what the parser takes for a secret is
// never shown.
func TestMaskURLHidesEverySecretParseSecretsAccepts(t *testing.T) {
	for _, secret := range []string{
		webhook.NewSecret(),
		"correct-horse-battery-staple-xyz",
		"abcdefghijklmnopqrstuvwxyz",
		"3141592653589793238462643383",
		"_-_-_-_-_-_-_-_-_-_-_-_-",
	} {
		if _, err := webhook.ParseSecrets(secret); err != nil {
			t.Fatalf("ParseSecrets refuses %q: %v", secret, err)
		}
		u := "https://shop.example/escrow/webhook/" + secret + "?shop=7"
		if got, want := webhook.MaskURL(u), "https://shop.example/escrow/webhook/SECRET?shop=7"; got != want {
			t.Errorf("MaskURL(%q) = %q, want %q", u, got, want)
		}
	}
}
