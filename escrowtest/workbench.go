package escrowtest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/escrowkit/escrow-go/internal/hooksecret"
)

// The control API's workbench: the state as one document (GET and PUT
// /_emulator/state), events delivered again (Trigger), the faults standing one by one,
// and the accounts with their keys and webhooks, masked, for the page.

// Trigger delivers event for transaction txID again to the webhooks of its parties'
// accounts, as the provider's replay of a past event would: a test of a receiver's
// de-duplication. The event must be one the transaction's timeline holds; the calls are
// queued as the event's own were (Deliveries marks them Replay), and nothing else
// changes. It fails when no party has a webhook registered, since nothing would be sent.
func (e *Emulator) Trigger(txID int64, event string) error {
	e.lock()
	defer e.mu.Unlock()
	tx := e.st.txs[txID]
	if tx == nil {
		return notFound("no transaction %d", txID)
	}
	if !slices.ContainsFunc(tx.timeline, func(t timelineEntry) bool { return t.event == event }) {
		var happened []string
		for _, t := range tx.timeline {
			if !slices.Contains(happened, t.event) {
				happened = append(happened, t.event)
			}
		}
		return fieldError{"event", fmt.Sprintf("transaction %d has had no %q event: its timeline holds %v", txID, event, happened)}
	}
	jobs := e.hookJobs(tx, event)
	if len(jobs) == 0 {
		return invalidState("trigger", tx.phase(), 0, "no party of transaction %d has a webhook registered: nothing to deliver", txID)
	}
	for i := range jobs {
		jobs[i].replay = true
	}
	e.hooks.enqueue(jobs...)
	return nil
}

// controlTrigger serves POST /_emulator/transactions/{id}/trigger {"event"}.
func (e *Emulator) controlTrigger(r *http.Request, body []byte) (response, error) {
	id, event, err := txAndField(r, body, "event")
	if err != nil {
		return response{}, err
	}
	if err := e.Trigger(id, event); err != nil {
		return response{}, err
	}
	return success(controlOK{OK: true}), nil
}

// txAndField reads a control path's transaction id and the one string field its body
// must hold.
func txAndField(r *http.Request, body []byte, field string) (int64, string, error) {
	id, err := pathID(r)
	if err != nil {
		return 0, "", err
	}
	o, err := decodeObject(body)
	if err != nil {
		return 0, "", err
	}
	o.required(field)
	value := o.str(field)
	return id, value, o.errs.orNil()
}

// serveState serves GET /_emulator/state: the snapshot, as Snapshot writes it.
func (e *Emulator) serveState(w http.ResponseWriter, _ *http.Request) {
	var buf bytes.Buffer
	if err := e.Snapshot(&buf); err != nil {
		e.errorResponse(err).write(w) // a bytes.Buffer does not fail; this is a bug
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// serveRestore serves PUT /_emulator/state: the body, a snapshot, replaces the state. A
// refused document is a 422 that says which part, and changes nothing; one larger than
// maxSnapshotBytes a 413.
func (e *Emulator) serveRestore(w http.ResponseWriter, r *http.Request) {
	err := e.Restore(http.MaxBytesReader(w, r.Body, maxSnapshotBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		newError(http.StatusRequestEntityTooLarge, "too_large", "the snapshot is larger than %d bytes", maxSnapshotBytes).response().write(w)
	case err != nil:
		newError(http.StatusUnprocessableEntity, "invalid_snapshot", "%v", err).response().write(w)
	default:
		success(controlOK{OK: true}).write(w)
	}
}

// controlFault is a standing fault as the control API shows it: POST /_emulator/faults's
// fields and the id that removes it.
type controlFault struct {
	ID             int64   `json:"id"`
	Endpoint       string  `json:"endpoint"`
	Status         int     `json:"status,omitempty"`
	Probability    float64 `json:"probability,omitempty"`
	Drop           string  `json:"drop,omitempty"`
	LatencyMS      int64   `json:"latency_ms,omitempty"`
	LatencyAfterMS int64   `json:"latency_after_ms,omitempty"`
}

type controlFaults struct {
	Faults []controlFault `json:"faults"`
}

func newControlFault(f ActiveFault) controlFault {
	return controlFault{ID: f.ID, Endpoint: f.Endpoint, Status: f.Status, Probability: f.Probability, Drop: f.Drop.String(),
		LatencyMS: f.Latency.Milliseconds(), LatencyAfterMS: f.LatencyAfter.Milliseconds()}
}

// fault is the control form read back; an unknown drop reads as -1, which validate names.
func (c controlFault) fault() ActiveFault {
	f := Fault{Endpoint: c.Endpoint, Status: c.Status, Probability: c.Probability,
		Latency: time.Duration(c.LatencyMS) * time.Millisecond, LatencyAfter: time.Duration(c.LatencyAfterMS) * time.Millisecond}
	switch c.Drop {
	case "":
	case "before":
		f.Drop = DropBefore
	case "after":
		f.Drop = DropAfter
	default:
		f.Drop = -1
	}
	return ActiveFault{ID: c.ID, Fault: f}
}

// controlFaultList serves GET /_emulator/faults.
func (e *Emulator) controlFaultList(*http.Request, []byte) (response, error) {
	return success(e.faultList()), nil
}

func (e *Emulator) faultList() controlFaults {
	out := controlFaults{Faults: []controlFault{}}
	for _, f := range e.Faults() {
		out.Faults = append(out.Faults, newControlFault(f))
	}
	return out
}

// controlRemoveFault serves DELETE /_emulator/faults/{id}.
func (e *Emulator) controlRemoveFault(r *http.Request, _ []byte) (response, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || !e.RemoveFault(id) {
		return response{}, notFound("no fault %q: GET /_emulator/faults lists them", r.PathValue("id"))
	}
	return success(controlOK{OK: true}), nil
}

// AccountView is an account as the control API shows it (GET /_emulator/accounts): its
// API keys by their last four characters and its webhooks masked, as webhook.MaskURL
// masks them, so that the page shows no credential.
type AccountView struct {
	ID      int64  `json:"id"`
	Email   string `json:"email"`
	Partner bool   `json:"partner"`
	Created string `json:"created"`
	// Password reports whether the account has a password.
	Password bool          `json:"password"`
	Keys     []KeyView     `json:"api_keys"`
	Webhooks []WebhookView `json:"webhooks"`
}

// KeyView is an API key as the control API shows it.
type KeyView struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	LastFour string `json:"last_four"`
	Active   bool   `json:"active"`
}

// WebhookView is a registered webhook, its URL masked.
type WebhookView struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
}

type controlAccounts struct {
	Total    int           `json:"total"`
	Accounts []AccountView `json:"accounts"`
}

// controlAccounts serves GET /_emulator/accounts ?limit=: the accounts, newest first.
func (e *Emulator) controlAccounts(r *http.Request, _ []byte) (response, error) {
	q := newQuery(r.URL.Query())
	limit := q.integer("limit", defaultListLimit, 1, 1000)
	if err := q.errs.orNil(); err != nil {
		return response{}, err
	}
	return success(e.accountList(limit)), nil
}

// accountList is the newest limit accounts.
func (e *Emulator) accountList(limit int) controlAccounts {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := controlAccounts{Total: len(e.st.accounts), Accounts: []AccountView{}}
	for _, id := range slices.Backward(slices.Sorted(maps.Keys(e.st.accounts))) {
		if len(out.Accounts) == limit {
			break
		}
		out.Accounts = append(out.Accounts, accountView(e.st.accounts[id]))
	}
	return out
}

func accountView(a *account) AccountView {
	v := AccountView{ID: a.id, Email: a.email, Partner: a.partner, Created: formatTime(a.created), Password: a.passwordHash != nil,
		Keys: []KeyView{}, Webhooks: []WebhookView{}}
	for _, k := range a.keys {
		v.Keys = append(v.Keys, KeyView{ID: k.id, Name: k.name, LastFour: k.lastFour, Active: k.active})
	}
	for _, h := range a.webhooks {
		v.Webhooks = append(v.Webhooks, WebhookView{ID: h.id, URL: hooksecret.MaskURL(h.url)})
	}
	return v
}
