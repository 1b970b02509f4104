package escrowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/escrowkit/escrow-go/internal/hooksecret"
)

// Delivery records one webhook call the emulator made.
type Delivery struct {
	// URL is the receiver's URL as registered. A delivery secret in its path is a
	// credential: the emulator's log, its control API (GET /_emulator/webhook_deliveries,
	// ControlClient.Deliveries) and its page show the URL masked as webhook.MaskURL does,
	// in Error too.
	URL           string `json:"url"`
	Event         string `json:"event"`
	EventType     string `json:"event_type"`
	TransactionID int64  `json:"transaction_id"`
	// StatusCode is the receiver's answer, or 0 when there was none.
	StatusCode int `json:"status_code"`
	// Error says why the call failed to get an answer (refused, timed out); "" otherwise.
	Error string `json:"error"`
	// LatencyMS is how long the call took, in milliseconds of real time, an injected
	// latency included.
	LatencyMS int64 `json:"latency_ms"`
	// Fault names the injected fault that touched the call ("dropped", "latency 200ms"),
	// "" when none did.
	Fault string `json:"fault,omitempty"`
	// Replay is true for a call Trigger made: an event delivered again.
	Replay bool `json:"replay,omitempty"`
}

// hookJob is one call to make.
type hookJob struct {
	url   string
	event string
	tx    int64
	// replay: Trigger delivers the event again.
	replay bool
	// rec is the call's place in the records, reserved when it was queued so that
	// Deliveries lists calls in the order the events happened, whichever receiver
	// answered first.
	rec *hookRecord
}

type hookRecord struct {
	Delivery
	done bool
}

// maxQueuedPerReceiver bounds each receiver's queue. A receiver that falls this far
// behind loses the newest calls, recorded as failed ("queue full"): the service does not
// retry failed calls either, and the emulator's memory stays bounded.
const maxQueuedPerReceiver = 1000

// maxRecords bounds the calls Deliveries remembers: the latest ones.
const maxRecords = 10_000

// receiverQueue is one receiver's calls, delivered one at a time in order by a goroutine
// that runs only while the queue holds something.
type receiverQueue struct {
	jobs []hookJob
}

// dispatcher delivers webhooks. Each receiver (webhook URL) has its own bounded queue
// and worker, so one customer's slow receiver never delays another's deliveries; calls
// to one receiver keep the order the events happened. Failed calls are recorded and not
// retried, as the spec says.
type dispatcher struct {
	client    *http.Client
	ownClient bool // created here, so Close may close its idle connections
	timeout   time.Duration
	faults    *faultInjector // "WEBHOOK ..." faults lose or delay calls
	log       *slog.Logger
	changed   func()          // called when a call is recorded: the page shows it
	ctx       context.Context // cancelled by close, which aborts the calls in flight
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu      sync.Mutex
	queues  map[string]*receiverQueue // receivers with calls queued or in flight
	pending int                       // calls queued or in flight
	idle    chan struct{}             // closed when pending drops to 0
	records []*hookRecord
	closed  bool
}

func newDispatcher(client *http.Client, timeout time.Duration, faults *faultInjector, log *slog.Logger) *dispatcher {
	d := &dispatcher{client: client, timeout: timeout, faults: faults, log: log, changed: func() {}, queues: map[string]*receiverQueue{}, idle: make(chan struct{})}
	close(d.idle) // nothing pending
	if client == nil {
		d.ownClient = true
		d.client = &http.Client{
			Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 4},
			// A webhook is one POST; a redirect is the receiver's answer, not a new address.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	return d
}

// enqueue queues calls, each on its receiver's queue, and starts the workers that are
// not running. Callers hold the emulator's lock, so calls queue in the order the events
// happened.
func (d *dispatcher) enqueue(jobs ...hookJob) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	for _, job := range jobs {
		job.rec = &hookRecord{Delivery: Delivery{URL: job.url, Event: job.event, EventType: "transaction", TransactionID: job.tx, Replay: job.replay}}
		if len(d.records) >= maxRecords {
			// A long-running emulator keeps the latest calls only.
			d.records = slices.Delete(d.records, 0, len(d.records)-maxRecords+1)
		}
		d.records = append(d.records, job.rec)
		q := d.queues[job.url]
		if q != nil && len(q.jobs) >= maxQueuedPerReceiver {
			job.rec.Error, job.rec.done = "queue full", true
			continue
		}
		if d.pending == 0 {
			d.idle = make(chan struct{})
		}
		d.pending++
		if q == nil {
			q = &receiverQueue{}
			d.queues[job.url] = q
			d.wg.Add(1)
			go d.run(job.url, q)
		}
		q.jobs = append(q.jobs, job)
	}
}

// run delivers one receiver's calls until its queue is empty, then forgets the queue, so
// that the map holds only receivers with work.
func (d *dispatcher) run(url string, q *receiverQueue) {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		if len(q.jobs) == 0 || d.closed {
			d.settled(len(q.jobs))
			q.jobs = nil
			delete(d.queues, url)
			d.mu.Unlock()
			return
		}
		job := q.jobs[0]
		d.mu.Unlock()

		rec := d.deliver(job)

		d.mu.Lock()
		q.jobs = q.jobs[1:]
		job.rec.Delivery, job.rec.done = rec, true
		d.changed() // before settled, so that a flush returns after it
		d.settled(1)
		d.mu.Unlock()
	}
}

// settled counts n calls done (or dropped) and wakes flush when none is left. d.mu is
// held.
func (d *dispatcher) settled(n int) {
	if n == 0 {
		return
	}
	d.pending -= n
	if d.pending == 0 {
		close(d.idle)
	}
}

// deliver makes one call and describes how it went.
func (d *dispatcher) deliver(job hookJob) (rec Delivery) {
	rec = Delivery{URL: job.url, Event: job.event, EventType: "transaction", TransactionID: job.tx, Replay: job.replay}
	start := time.Now()
	defer func() { rec.LatencyMS = time.Since(start).Milliseconds() }()
	fault := d.faults.pick(webhookMethod + " /" + job.event)
	if fault.Latency > 0 {
		rec.Fault = "latency " + fault.Latency.String()
		t := time.NewTimer(fault.Latency)
		select {
		case <-t.C:
		case <-d.ctx.Done():
			t.Stop()
		}
	}
	if fault.Drop != DropNone {
		rec.Error, rec.Fault = "dropped by fault", strings.TrimPrefix(rec.Fault+", dropped", ", ")
		d.log.Info("escrowtest webhook", "url", hooksecret.MaskURL(job.url), "event", job.event, "transaction_id", job.tx, "error", rec.Error)
		return rec
	}
	body, _ := json.Marshal(map[string]any{"event": job.event, "event_type": rec.EventType, "transaction_id": job.tx})
	ctx, cancel := context.WithTimeout(d.ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.url, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "escrowtest-webhooks")
		var resp *http.Response
		if resp, err = d.client.Do(req); err == nil {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			rec.StatusCode = resp.StatusCode
		}
	}
	if err != nil {
		rec.Error = err.Error()
	}
	d.log.Info("escrowtest webhook", "url", hooksecret.MaskURL(job.url), "event", job.event, "transaction_id", job.tx, "status", rec.StatusCode, "error", rec.masked().Error)
	return rec
}

// flush waits until every queued call has been made, or ctx ends.
func (d *dispatcher) flush(ctx context.Context) error {
	d.mu.Lock()
	idle := d.idle
	d.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliveries returns the calls made so far, in the order the events happened.
func (d *dispatcher) deliveries() []Delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Delivery
	for _, r := range d.records {
		if r.done {
			out = append(out, r.Delivery)
		}
	}
	return out
}

// reset drops queued calls and records; a call in flight is made but not recorded.
func (d *dispatcher) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, q := range d.queues {
		if len(q.jobs) > 1 {
			d.settled(len(q.jobs) - 1) // the first is in flight; its worker counts it
			q.jobs = q.jobs[:1]
		}
	}
	d.records = nil
}

// close drops queued calls, aborts those in flight and waits for the workers to end.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
	if d.ownClient {
		d.client.CloseIdleConnections()
	}
}

// masked is the delivery as the emulator shows it: its URL masked as webhook.MaskURL
// does, also where its error quotes it.
func (d Delivery) masked() Delivery {
	m := hooksecret.MaskURL(d.URL)
	if m != d.URL {
		d.Error = strings.ReplaceAll(d.Error, d.URL, m)
		d.URL = m
	}
	return d
}
