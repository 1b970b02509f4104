package escrowtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"
)

// A snapshot is the emulator's whole state as one JSON document: the clock, accounts with
// their key and password hashes, profiles, saved disbursement methods and webhooks,
// transactions whole (parties, items, schedules, fees, ledger, timeline, As-Customer
// journal), reports, card payments, the id counters, the faults with the state of their
// random generator, the rate limit and its open windows, and the webhook calls made. It
// leaves out what is not state: webhook calls still queued (a restored emulator does not
// make them), the request log, and the options given to NewEmulator (the page, the
// logger, webhook timeouts).
//
// The document carries "version"; a document of another version is refused, as is one
// whose parts do not hold together (a party naming no account, an id counter behind the
// ids in use): Restore checks everything before it changes anything, so that a restored
// emulator never meets a record it cannot serve.

// snapshotVersion is the version of the document Snapshot writes and Restore reads.
const snapshotVersion = 1

// maxSnapshotBytes bounds what Restore and PUT /_emulator/state read.
const maxSnapshotBytes = 64 << 20

// ErrSnapshot matches every error Restore returns about the document it was given.
var ErrSnapshot = errors.New("escrowtest: snapshot refused")

type snapshot struct {
	Version      int               `json:"version"`
	Clock        snapClock         `json:"clock"`
	IDs          snapIDs           `json:"ids"`
	Accounts     []snapAccount     `json:"accounts"`
	Transactions []snapTransaction `json:"transactions"`
	Reports      []snapReport      `json:"reports"`
	CardPayments []snapCardPayment `json:"card_payments"`
	Faults       snapFaults        `json:"faults"`
	RateLimit    snapRateLimit     `json:"rate_limit"`
	Deliveries   []Delivery        `json:"deliveries"`
}

// snapshotParts are the document's members in order, each decoded and checked alone so
// that an error names its part.
var snapshotParts = []string{"version", "clock", "ids", "accounts", "transactions", "reports", "card_payments", "faults", "rate_limit", "deliveries"}

type snapClock struct {
	Now    time.Time `json:"now"` // for a person reading the file; start and offset make it
	Start  time.Time `json:"start"`
	Offset duration  `json:"offset"`
	Frozen bool      `json:"frozen"`
}

type snapIDs struct {
	Customer    int64 `json:"customer"`
	Transaction int64 `json:"transaction"`
	Item        int64 `json:"item"`
	Party       int64 `json:"party"`
	APIKey      int64 `json:"api_key"`
	Webhook     int64 `json:"webhook"`
	Method      int64 `json:"disbursement_method"`
	Entry       int64 `json:"timeline_entry"`
	TaxNumber   int64 `json:"tax_number"`
	Fault       int64 `json:"fault"`
}

type snapAccount struct {
	ID               int64                     `json:"id"`
	Email            string                    `json:"email"`
	PasswordHash     []byte                    `json:"password_hash,omitempty"`
	Keys             []snapKey                 `json:"api_keys"`
	Partner          bool                      `json:"partner"`
	Created          time.Time                 `json:"created"`
	CreatedBy        int64                     `json:"created_by,omitempty"`
	Profile          snapProfile               `json:"profile"`
	VerifiedPersonal bool                      `json:"verified_personal"`
	VerifiedCompany  bool                      `json:"verified_company"`
	Methods          []*wireDisbursementMethod `json:"disbursement_methods"`
	Webhooks         []snapWebhook             `json:"webhooks"`
}

type snapKey struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	Hash     []byte    `json:"hash"`
	LastFour string    `json:"last_four"`
	Created  time.Time `json:"created"`
	Active   bool      `json:"active"`
}

type snapWebhook struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
}

type snapProfile struct {
	FirstName               string                       `json:"first_name,omitempty"`
	MiddleName              string                       `json:"middle_name,omitempty"`
	LastName                string                       `json:"last_name,omitempty"`
	Phone                   string                       `json:"phone,omitempty"`
	Address                 *wireAddress                 `json:"address,omitempty"`
	ShippingAddress         *wireAddress                 `json:"shipping_address,omitempty"`
	CompanyName             string                       `json:"company_name,omitempty"`
	CompanyAddress          *wireAddress                 `json:"company_address,omitempty"`
	DateOfBirth             time.Time                    `json:"date_of_birth"`
	TaxNumbers              []wireTaxNumber              `json:"tax_numbers,omitempty"`
	IdentificationDocuments []wireIdentificationDocument `json:"identification_documents,omitempty"`
}

type snapTransaction struct {
	ID            int64           `json:"id"`
	Creator       int64           `json:"creator"`
	Currency      string          `json:"currency"`
	Description   string          `json:"description"`
	Reference     string          `json:"reference,omitempty"`
	Created       time.Time       `json:"created"`
	Closed        time.Time       `json:"closed"`
	Parties       []snapParty     `json:"parties"`
	Items         []snapItem      `json:"items"`
	Cancelled     bool            `json:"cancelled"`
	Completed     bool            `json:"completed"`
	Funded        bool            `json:"funded"`
	PaymentMethod string          `json:"payment_method,omitempty"`
	WireSent      bool            `json:"wire_sent"`
	Timeline      []snapEntry     `json:"timeline"`
	Money         snapLedger      `json:"money"`
	Delegated     []snapDelegated `json:"as_customer_calls"`
}

type snapParty struct {
	ID         int64   `json:"id"`
	Role       string  `json:"role"`
	Account    int64   `json:"account"`
	Agreed     bool    `json:"agreed"`
	SelfAgreed bool    `json:"self_agreed"`
	Initiator  bool    `json:"initiator"`
	HiddenFrom []int64 `json:"hidden_from,omitempty"`
	Method     int64   `json:"disbursement_method,omitempty"`
}

type snapItem struct {
	ID               int64          `json:"id"`
	Title            string         `json:"title,omitempty"`
	Description      string         `json:"description,omitempty"`
	Type             string         `json:"type"`
	Category         string         `json:"category,omitempty"`
	InspectionPeriod int64          `json:"inspection_period"`
	Quantity         int64          `json:"quantity"`
	Extra            snapExtra      `json:"extra_attributes"`
	Schedule         []snapSchedule `json:"schedule"`
	Fees             []snapFee      `json:"fees"`
	Flags            []string       `json:"flags"`
	HiddenFrom       []int64        `json:"hidden_from,omitempty"`
	HasVisibility    bool           `json:"has_visibility"`
	InspectionEnds   time.Time      `json:"inspection_ends"`
	ReturnEnds       time.Time      `json:"return_ends"`
}

type snapExtra struct {
	WithContent      bool   `json:"with_content"`
	TitleCollection  bool   `json:"title_collection"`
	LienHolderPayoff bool   `json:"lien_holder_payoff"`
	VIN              string `json:"vin,omitempty"`
	Odometer         string `json:"odometer,omitempty"`
	Make             string `json:"make,omitempty"`
	Model            string `json:"model,omitempty"`
	Year             int64  `json:"year,omitempty"`
}

type snapSchedule struct {
	Amount      cents     `json:"amount_cents"`
	Payer       int64     `json:"payer"`
	Beneficiary int64     `json:"beneficiary"`
	Due         time.Time `json:"due"`
	Secured     bool      `json:"secured"`
	PaidIn      bool      `json:"paid_in"`
	Disbursed   bool      `json:"disbursed"`
	Refunded    bool      `json:"refunded"`
}

type snapFee struct {
	Type    string `json:"type"`
	Payer   int64  `json:"payer"`
	Halves  int    `json:"halves"`
	Amount  cents  `json:"amount_cents"`
	PaidIn  bool   `json:"paid_in"`
	Settled bool   `json:"settled"`
}

type snapEntry struct {
	ID     int64     `json:"id"`
	Event  string    `json:"event"`
	Date   time.Time `json:"date"`
	Item   int64     `json:"item,omitempty"`
	Actor  int64     `json:"actor,omitempty"`
	Detail string    `json:"detail"`
}

type snapLedger struct {
	In       cents `json:"in_cents"`
	Out      cents `json:"out_cents"`
	Fees     cents `json:"fees_cents"`
	Withheld cents `json:"withheld_cents"`
}

type snapDelegated struct {
	At       time.Time `json:"at"`
	Endpoint string    `json:"endpoint"`
	Partner  int64     `json:"partner"`
	As       string    `json:"as_customer"`
	Status   int       `json:"status"`
}

type snapReport struct {
	TaskID  string    `json:"task_id"`
	Partner int64     `json:"partner"`
	Created time.Time `json:"created"`
	CSV     string    `json:"csv"`
}

type snapCardPayment struct {
	Out      bool      `json:"out"`
	Customer int64     `json:"customer"`
	TX       int64     `json:"transaction"`
	Amount   cents     `json:"amount_cents"`
	Created  time.Time `json:"created"`
}

type snapFaults struct {
	// Random is the state of the generator that decides whether a fault with a
	// probability fires, so that a restored emulator fires on the same requests.
	Random []byte      `json:"random"`
	Faults []snapFault `json:"faults"`
}

type snapFault struct {
	ID           int64    `json:"id"`
	Endpoint     string   `json:"endpoint"`
	Status       int      `json:"status,omitempty"`
	Probability  float64  `json:"probability,omitempty"`
	Drop         string   `json:"drop,omitempty"`
	Latency      duration `json:"latency,omitempty"`
	LatencyAfter duration `json:"latency_after,omitempty"`
}

type snapRateLimit struct {
	Limit   int              `json:"limit"`
	Window  duration         `json:"window"`
	Windows []snapRateWindow `json:"windows"`
}

type snapRateWindow struct {
	Account  int64     `json:"account"`
	Endpoint string    `json:"endpoint"`
	Start    time.Time `json:"start"`
	Used     int       `json:"used"`
}

// duration is a time.Duration written as Go writes durations ("1m30s").
type duration time.Duration

func (d duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.New("a duration is a string such as \"1m30s\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

// Snapshot writes the emulator's whole state to w as one JSON document, which Restore
// reads back (the comment at the top of snapshot.go says what it holds). The document
// holds key and password hashes and webhook URLs with their delivery secrets: keep it
// where only its owner reads it (escrow emulator writes it 0600).
func (e *Emulator) Snapshot(w io.Writer) error {
	e.lock()
	snap := snapshot{Version: snapshotVersion, Clock: e.clock.snapshot(), IDs: e.st.ids.snapshot()}
	snap.Accounts, snap.Transactions = e.st.snapshotAccounts(), e.st.snapshotTransactions()
	snap.Reports, snap.CardPayments = e.st.snapshotReports(), e.st.snapshotPayments()
	snap.RateLimit = e.limiter.snapshot()
	snap.Faults, snap.IDs.Fault = e.faults.snapshot()
	snap.Deliveries = e.hooks.deliveries()
	e.mu.Unlock()
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(snap)
}

// Restore replaces the emulator's whole state with a document Snapshot wrote: it then
// answers every call as the emulator that wrote it did, its clock where that one's was
// (frozen or following the wall clock with the same shift), and hands out the ids that
// one would have handed out next. Webhook calls still queued are dropped, as Reset drops
// them; the request log is kept. A document of another version, a malformed one, or one
// whose parts do not hold together is refused with an error (matching ErrSnapshot) that
// names the part and the record, and the emulator is left as it was.
func (e *Emulator) Restore(r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, maxSnapshotBytes+1))
	if err != nil {
		return fmt.Errorf("%w: reading it: %w", ErrSnapshot, err)
	}
	if len(data) > maxSnapshotBytes {
		return fmt.Errorf("%w: it is larger than %d bytes", ErrSnapshot, maxSnapshotBytes)
	}
	snap, err := decodeSnapshot(data)
	if err != nil {
		return err
	}
	st, err := snap.store()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrSnapshot, err)
	}
	faults, random, err := e.faults.restored(snap.Faults, snap.IDs.Fault)
	if err != nil {
		return fmt.Errorf("%w: faults: %v", ErrSnapshot, err)
	}
	limiter, err := snap.RateLimit.limiter()
	if err != nil {
		return fmt.Errorf("%w: rate_limit: %v", ErrSnapshot, err)
	}
	if len(snap.Deliveries) > maxRecords {
		return fmt.Errorf("%w: deliveries: %d calls, more than the %d kept", ErrSnapshot, len(snap.Deliveries), maxRecords)
	}

	e.mu.Lock()
	e.st, e.limiter = st, limiter
	e.clock.restore(snap.Clock)
	e.faults.replace(faults, random, snap.IDs.Fault)
	e.hooks.restore(snap.Deliveries)
	e.mu.Unlock()
	e.changes.notify()
	return nil
}

// decodeSnapshot reads the document part by part, so that an error names its part, and
// refuses a version other than snapshotVersion before reading anything else.
func decodeSnapshot(data []byte) (*snapshot, error) {
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(data, &parts); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrSnapshot, err)
	}
	for name := range parts {
		if !slices.Contains(snapshotParts, name) {
			return nil, fmt.Errorf("%w: unknown part %q", ErrSnapshot, name)
		}
	}
	var snap snapshot
	if err := json.Unmarshal(parts["version"], &snap.Version); err != nil || snap.Version != snapshotVersion {
		return nil, fmt.Errorf("%w: version: %s, this emulator reads version %d", ErrSnapshot, bytes.TrimSpace(parts["version"]), snapshotVersion)
	}
	dst := map[string]any{
		"clock": &snap.Clock, "ids": &snap.IDs, "accounts": &snap.Accounts, "transactions": &snap.Transactions,
		"reports": &snap.Reports, "card_payments": &snap.CardPayments, "faults": &snap.Faults,
		"rate_limit": &snap.RateLimit, "deliveries": &snap.Deliveries,
	}
	for _, name := range snapshotParts[1:] {
		raw, ok := parts[name]
		if !ok {
			return nil, fmt.Errorf("%w: %s: missing", ErrSnapshot, name)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(dst[name]); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrSnapshot, name, err)
		}
	}
	return &snap, nil
}

func (c *clock) snapshot() snapClock {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := snapClock{Start: c.start, Offset: duration(c.offset), Frozen: c.wall == nil}
	s.Now = c.start.Add(c.offset)
	if c.wall != nil {
		s.Now = c.wall().Add(c.offset)
	}
	return s
}

// restore sets the clock as a snapshot had it.
func (c *clock) restore(s snapClock) {
	fresh := newClock(s.Start, s.Frozen)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wall, c.start, c.offset = fresh.wall, fresh.start, time.Duration(s.Offset)
}

func (ids ids) snapshot() snapIDs {
	return snapIDs{
		Customer: ids.customer, Transaction: ids.transaction, Item: ids.item, Party: ids.party, APIKey: ids.apiKey,
		Webhook: ids.webhook, Method: ids.method, Entry: ids.entry, TaxNumber: ids.taxNumber,
	}
}

func (s snapIDs) ids() ids {
	return ids{
		customer: s.Customer, transaction: s.Transaction, item: s.Item, party: s.Party, apiKey: s.APIKey,
		webhook: s.Webhook, method: s.Method, entry: s.Entry, taxNumber: s.TaxNumber,
	}
}

func (l *rateLimiter) snapshot() snapRateLimit {
	s := snapRateLimit{Limit: l.limit, Window: duration(l.window), Windows: []snapRateWindow{}}
	for k, w := range l.windows {
		s.Windows = append(s.Windows, snapRateWindow{Account: k.account, Endpoint: k.endpoint, Start: w.start, Used: w.used})
	}
	slices.SortFunc(s.Windows, func(a, b snapRateWindow) int {
		if c := a.Start.Compare(b.Start); c != 0 {
			return c
		}
		return cmpKey(a, b)
	})
	return s
}

func cmpKey(a, b snapRateWindow) int {
	if a.Account != b.Account {
		return int(a.Account - b.Account)
	}
	switch {
	case a.Endpoint < b.Endpoint:
		return -1
	case a.Endpoint > b.Endpoint:
		return 1
	}
	return 0
}

// limiter is the rate limiter a snapshot describes.
func (s snapRateLimit) limiter() (*rateLimiter, error) {
	if s.Window < 0 {
		return nil, errors.New("window is negative")
	}
	if len(s.Windows) > maxWindows {
		return nil, fmt.Errorf("%d windows, more than the %d kept", len(s.Windows), maxWindows)
	}
	l := newRateLimiter(s.Limit, time.Duration(s.Window))
	for i, w := range s.Windows {
		k := rateKey{account: w.Account, endpoint: w.Endpoint}
		if w.Used < 0 || l.windows[k] != nil {
			return nil, fmt.Errorf("windows[%d]: used is negative or the window is there twice", i)
		}
		l.windows[k] = &rateWindow{start: w.Start, used: w.Used}
	}
	return l, nil
}

// restore replaces the recorded calls with a snapshot's and drops queued ones, as reset.
func (d *dispatcher) restore(calls []Delivery) {
	d.reset()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range calls {
		d.records = append(d.records, &hookRecord{Delivery: c, done: true})
	}
}

// snapshot returns the faults and the state of their generator, and the next fault id.
func (fi *faultInjector) snapshot() (snapFaults, int64) {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	random, _ := fi.src.MarshalBinary() // a PCG always marshals
	s := snapFaults{Random: random, Faults: []snapFault{}}
	for _, f := range fi.faults {
		s.Faults = append(s.Faults, snapFault{
			ID: f.ID, Endpoint: f.Endpoint, Status: f.Status, Probability: f.Probability, Drop: f.Drop.String(),
			Latency: duration(f.Latency), LatencyAfter: duration(f.LatencyAfter),
		})
	}
	return s, fi.nextID
}

// restored checks a snapshot's faults as InjectFault checks a fault, and returns them
// with their generator.
func (fi *faultInjector) restored(s snapFaults, nextID int64) ([]ActiveFault, *rand.PCG, error) {
	src := rand.NewPCG(0, 0)
	if err := src.UnmarshalBinary(s.Random); err != nil {
		return nil, nil, fmt.Errorf("random: %v", err)
	}
	if len(s.Faults) > maxFaults {
		return nil, nil, fmt.Errorf("%d faults, more than the %d allowed", len(s.Faults), maxFaults)
	}
	var out []ActiveFault
	for i, sf := range s.Faults {
		f := Fault{Endpoint: sf.Endpoint, Status: sf.Status, Probability: sf.Probability, Latency: time.Duration(sf.Latency), LatencyAfter: time.Duration(sf.LatencyAfter)}
		switch sf.Drop {
		case "":
		case "before":
			f.Drop = DropBefore
		case "after":
			f.Drop = DropAfter
		default:
			return nil, nil, fmt.Errorf("faults[%d]: drop %q is not before or after", i, sf.Drop)
		}
		if err := errors.Join(f.validate(), fi.routes.faultable(f.Endpoint)); err != nil {
			return nil, nil, fmt.Errorf("faults[%d]: %v", i, err)
		}
		if sf.ID <= 0 || sf.ID >= nextID || slices.ContainsFunc(out, func(a ActiveFault) bool { return a.ID == sf.ID }) {
			return nil, nil, fmt.Errorf("faults[%d]: id %d is not positive, not below ids.fault or there twice", i, sf.ID)
		}
		out = append(out, ActiveFault{Fault: f, ID: sf.ID})
	}
	return out, src, nil
}
