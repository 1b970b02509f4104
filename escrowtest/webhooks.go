package escrowtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Delivery records one webhook call the emulator made.
type Delivery struct {
	URL           string `json:"url"`
	Event         string `json:"event"`
	EventType     string `json:"event_type"`
	TransactionID int64  `json:"transaction_id"`
	// StatusCode is the receiver's answer, or 0 when there was none.
	StatusCode int `json:"status_code"`
	// Error says why the call failed to get an answer (refused, timed out); "" otherwise.
	Error string `json:"error"`
}

// hookJob is one call to make.
type hookJob struct {
	url   string
	event string
	tx    int64
	gen   int // the dispatcher generation that queued it; Reset starts a new one
}

// dispatcher delivers webhooks one at a time, in the order the events happened, on a
// goroutine that runs only while there is something to deliver. Failed calls are recorded
// and not retried, as the spec says.
type dispatcher struct {
	client    *http.Client
	ownClient bool // created here, so Close may close its idle connections
	timeout   time.Duration
	faults    *faultInjector // "WEBHOOK ..." faults lose or delay calls
	log       *slog.Logger
	ctx       context.Context // cancelled by close, which aborts a call in flight
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu      sync.Mutex
	queue   []hookJob
	running bool
	idle    chan struct{} // closed when the running worker finds the queue empty
	records []Delivery
	gen     int
	closed  bool
}

func newDispatcher(client *http.Client, timeout time.Duration, faults *faultInjector, log *slog.Logger) *dispatcher {
	d := &dispatcher{client: client, timeout: timeout, faults: faults, log: log, idle: make(chan struct{})}
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

// enqueue queues calls and starts the worker if it is not running. Callers hold the
// emulator's lock, so calls queue in the order the events happened.
func (d *dispatcher) enqueue(jobs ...hookJob) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed || len(jobs) == 0 {
		return
	}
	for i := range jobs {
		jobs[i].gen = d.gen
	}
	d.queue = append(d.queue, jobs...)
	if !d.running {
		d.running = true
		d.wg.Add(1)
		go d.run()
	}
}

func (d *dispatcher) run() {
	defer d.wg.Done()
	for {
		d.mu.Lock()
		if len(d.queue) == 0 || d.closed {
			d.running = false
			close(d.idle)
			d.idle = make(chan struct{})
			d.mu.Unlock()
			return
		}
		job := d.queue[0]
		d.queue = d.queue[1:]
		d.mu.Unlock()

		rec := d.deliver(job)

		d.mu.Lock()
		if job.gen == d.gen {
			d.records = append(d.records, rec)
		}
		d.mu.Unlock()
	}
}

// deliver makes one call and describes how it went.
func (d *dispatcher) deliver(job hookJob) Delivery {
	rec := Delivery{URL: job.url, Event: job.event, EventType: "transaction", TransactionID: job.tx}
	fault := d.faults.pick(webhookMethod + " /" + job.event)
	if fault.Latency > 0 {
		t := time.NewTimer(fault.Latency)
		select {
		case <-t.C:
		case <-d.ctx.Done():
			t.Stop()
		}
	}
	if fault.Drop != DropNone {
		rec.Error = "dropped by fault"
		d.log.Info("escrowtest webhook", "url", job.url, "event", job.event, "transaction_id", job.tx, "error", rec.Error)
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
	d.log.Info("escrowtest webhook", "url", job.url, "event", job.event, "transaction_id", job.tx, "status", rec.StatusCode, "error", rec.Error)
	return rec
}

// flush waits until every queued call has been made, or ctx ends.
func (d *dispatcher) flush(ctx context.Context) error {
	d.mu.Lock()
	running, idle := d.running, d.idle
	d.mu.Unlock()
	if !running {
		return nil
	}
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliveries returns a copy of the records.
func (d *dispatcher) deliveries() []Delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]Delivery(nil), d.records...)
}

// reset drops queued calls and records; a call in flight is not recorded.
func (d *dispatcher) reset() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queue, d.records = nil, nil
	d.gen++
}

// close drops queued calls, aborts the one in flight and waits for the worker to end.
func (d *dispatcher) close() {
	d.mu.Lock()
	d.closed = true
	d.queue = nil
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
	if d.ownClient {
		d.client.CloseIdleConnections()
	}
}
