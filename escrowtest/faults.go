package escrowtest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Fault makes the emulator misbehave on an endpoint, to test a client's error handling.
// A fault may add latency and then either answer a status or drop the connection.
type Fault struct {
	// Endpoint is a method and a route template below the version segment, as in
	// "POST /transaction" or "GET /transaction/{id}" (parameter names do not matter),
	// "POST *" for every POST, or "*" for every API request (Endpoints lists the routes).
	// The control API is never faulted.
	//
	// "WEBHOOK *" faults the emulator's own webhook calls instead, and "WEBHOOK /ship" those
	// of one event: Drop (before or after) loses the call, as a network would, and Latency
	// delays it. A lost call is recorded in Deliveries with the error "dropped by fault".
	Endpoint string
	// Status, when not 0, is answered instead of handling the request (400 to 599).
	Status int
	// Probability is the chance, from 0 to 1, that the fault fires on a matching request;
	// 0 means always.
	Probability float64
	// Drop closes the connection without an answer, before or after handling the request.
	Drop Drop
	// Latency delays the answer. It ends early when the client goes away.
	Latency time.Duration
	// LatencyAfter delays the answer after the request is handled, as on a server that is
	// slow to answer rather than slow to start: the change is made even when the client
	// gives up waiting, so a client timeout leaves it unable to tell whether it happened.
	// (Latency, by contrast, waits before handling and handles nothing once the client has
	// gone.) It needs an answer to delay, so it does not combine with DropBefore, and it
	// does not apply to webhook calls.
	LatencyAfter time.Duration
}

// Drop says when a fault drops the connection.
type Drop int

const (
	// DropNone keeps the connection.
	DropNone Drop = iota
	// DropBefore drops the connection without handling the request: nothing changes.
	DropBefore
	// DropAfter handles the request, so its change is made, then drops the connection
	// instead of answering: the client cannot tell whether it happened.
	DropAfter
)

// String returns "before", "after" or "".
func (d Drop) String() string {
	switch d {
	case DropBefore:
		return "before"
	case DropAfter:
		return "after"
	}
	return ""
}

func (f Fault) validate() error {
	var errs []error
	if !validEndpoint(f.Endpoint) {
		errs = append(errs, fmt.Errorf("endpoint %q is not \"*\" or a method and a path such as \"POST /transaction\"", f.Endpoint))
	}
	if f.Status != 0 && (f.Status < 400 || f.Status > 599) {
		errs = append(errs, fmt.Errorf("status %d is not between 400 and 599", f.Status))
	}
	if f.Probability < 0 || f.Probability > 1 || f.Probability != f.Probability {
		errs = append(errs, fmt.Errorf("probability %v is not between 0 and 1", f.Probability))
	}
	errs = append(errs, f.delayErrors()...)
	return errors.Join(append(errs, f.combinationErrors()...)...)
}

// hasEffect reports whether the fault does anything when it fires.
func (f Fault) hasEffect() bool {
	return f.Status != 0 || f.Drop != DropNone || f.Latency != 0 || f.LatencyAfter != 0
}

// delayErrors lists what is wrong with the fault's drop and latencies, each alone.
func (f Fault) delayErrors() []error {
	var errs []error
	if f.Drop < DropNone || f.Drop > DropAfter {
		errs = append(errs, fmt.Errorf("unknown drop %d", f.Drop))
	}
	if f.Latency < 0 {
		errs = append(errs, errors.New("latency is negative"))
	}
	if f.LatencyAfter < 0 {
		errs = append(errs, errors.New("latency after handling is negative"))
	}
	return errs
}

// combinationErrors lists what is wrong with the fault's fields taken together.
func (f Fault) combinationErrors() []error {
	var errs []error
	if f.LatencyAfter != 0 && f.Drop == DropBefore {
		errs = append(errs, errors.New("a connection dropped before handling has no answer to delay"))
	}
	if f.Status != 0 && f.Drop != DropNone {
		errs = append(errs, errors.New("a fault either answers a status or drops the connection, not both"))
	}
	if !f.hasEffect() {
		errs = append(errs, errors.New("a fault needs a status, a drop or a latency"))
	}
	if f.answersWebhook() {
		errs = append(errs, errors.New("a webhook fault drops or delays the call; it has no status to answer nor answer to delay"))
	}
	return errs
}

// answersWebhook reports a fault on the emulator's webhook calls that would answer a
// status or delay an answer, which the emulator's own calls have none of.
func (f Fault) answersWebhook() bool {
	return isWebhookEndpoint(f.Endpoint) && (f.Status != 0 || f.LatencyAfter != 0)
}

func validEndpoint(s string) bool {
	if s == "*" {
		return true
	}
	method, path, ok := strings.Cut(strings.TrimSpace(s), " ")
	path = strings.TrimSpace(path)
	return ok && method != "" && (path == "*" || strings.HasPrefix(path, "/"))
}

// webhookMethod is the pseudo-method naming the emulator's webhook calls in faults: a
// delivery of event ship is the endpoint "WEBHOOK /ship".
const webhookMethod = "WEBHOOK"

func isWebhookEndpoint(s string) bool {
	method, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	return strings.EqualFold(method, webhookMethod)
}

// matches reports whether the fault applies to an endpoint named as route.endpoint does.
// "*" means every API request, not the emulator's own webhook calls.
func (f Fault) matches(endpoint string) bool {
	if f.Endpoint == "*" {
		return !isWebhookEndpoint(endpoint)
	}
	want, got := normalizeEndpoint(f.Endpoint), normalizeEndpoint(endpoint)
	if method, path, _ := strings.Cut(want, " "); path == "*" {
		return strings.HasPrefix(got, method+" ")
	}
	return want == got
}

// ActiveFault is an injected fault and the id that removes it (RemoveFault, DELETE
// /_emulator/faults/{id}).
type ActiveFault struct {
	ID int64
	Fault
}

type faultInjector struct {
	routes *router // what faults may name
	mu     sync.Mutex
	src    *rand.PCG // rng's source, kept to be written in snapshots
	rng    *rand.Rand
	faults []ActiveFault
	nextID int64
}

func newFaultInjector(seed int64, routes *router) *faultInjector {
	src := rand.NewPCG(uint64(seed), uint64(seed))
	return &faultInjector{routes: routes, src: src, rng: rand.New(src), nextID: 1}
}

func (fi *faultInjector) add(f Fault) (int64, error) {
	if err := errors.Join(f.validate(), fi.routes.faultable(f.Endpoint)); err != nil {
		return 0, err
	}
	fi.mu.Lock()
	defer fi.mu.Unlock()
	if len(fi.faults) >= maxFaults {
		return 0, fmt.Errorf("at most %d faults at once: clear them first", maxFaults)
	}
	id := next(&fi.nextID)
	fi.faults = append(fi.faults, ActiveFault{ID: id, Fault: f})
	return id, nil
}

// list returns the faults standing, in the order they apply.
func (fi *faultInjector) list() []ActiveFault {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	return slices.Clone(fi.faults)
}

// remove removes one fault, reporting whether it stood.
func (fi *faultInjector) remove(id int64) bool {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	n := len(fi.faults)
	fi.faults = slices.DeleteFunc(fi.faults, func(f ActiveFault) bool { return f.ID == id })
	return len(fi.faults) < n
}

// replace puts a snapshot's faults, generator and next id in place.
func (fi *faultInjector) replace(faults []ActiveFault, src *rand.PCG, nextID int64) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.faults, fi.src, fi.rng, fi.nextID = faults, src, rand.New(src), nextID
}

// maxFaults bounds the faults the control API may pile up.
const maxFaults = 1000

// faultable refuses a fault endpoint that names nothing the emulator serves: such a fault
// would be accepted and never fire, and the test relying on it would pass for the wrong
// reason. "*", "METHOD *" for a method some route takes, a route template, "WEBHOOK *" and
// "WEBHOOK /<event>" for an event the emulator sends are served.
func (rt *router) faultable(endpoint string) error {
	if endpoint == "*" || !validEndpoint(endpoint) {
		return nil // validate reports the malformed ones
	}
	method, path, _ := strings.Cut(normalizeEndpoint(endpoint), " ")
	switch {
	case method == webhookMethod && !sentEvent(path):
		return fmt.Errorf("endpoint %q names no event the emulator sends", endpoint)
	case method != webhookMethod && !rt.serves(method, path):
		return fmt.Errorf("endpoint %q matches no route: name one as in \"GET /transaction/{id}\"", endpoint)
	}
	return nil
}

// sentEvent reports whether a webhook fault's path, "*" or "/<event>", names events the
// emulator sends.
func sentEvent(path string) bool {
	_, known := eventMessages[strings.TrimPrefix(path, "/")]
	return path == "*" || known
}

// serves reports whether some route takes the method on the path of a normalized
// endpoint, "*" standing for any path.
func (rt *router) serves(method, path string) bool {
	for _, r := range rt.routes {
		if r.method == method && (path == "*" || normalizeEndpoint(r.endpoint()) == method+" "+path) {
			return true
		}
	}
	return false
}

func (fi *faultInjector) clear() {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.faults = nil
}

// pick returns the first fault, in the order they were injected, that matches the
// endpoint and fires; the zero Fault when none does.
func (fi *faultInjector) pick(endpoint string) Fault {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	for _, f := range fi.faults {
		if f.matches(endpoint) && (f.Probability == 0 || fi.rng.Float64() < f.Probability) {
			return f.Fault
		}
	}
	return Fault{}
}

// dropConnection closes the client's connection without an answer. Where the connection
// cannot be taken over (HTTP/2), aborting the handler resets the stream instead.
func dropConnection(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}
