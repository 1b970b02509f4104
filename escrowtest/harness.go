package escrowtest

import (
	"context"
	"fmt"
	"time"
)

// Account is a customer's credentials, for HTTP Basic authentication with Email as the
// user and Password or APIKey as the password.
// The control API (POST /_emulator/customers) answers with it as JSON.
type Account struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
	// APIKey is a new API key, "<digits>_<secret>". Only its hash is kept.
	APIKey string `json:"api_key"`
	// Password is set when this call gave the account its password. It is empty when the
	// account already had one: the emulator keeps passwords only as hashes.
	Password string `json:"password,omitempty"`
}

// AddCustomer returns credentials for a customer: a new account, or, when the e-mail
// address already has one (for example created for a transaction party), that account
// with a fresh API key. It panics when email is not an e-mail address.
func (e *Emulator) AddCustomer(email string) Account {
	return e.addAccount(email, false)
}

// AddPartner is AddCustomer for an approved partner, which may call the partner
// endpoints, add partner fees, and act As-Customer for the parties of its transactions.
// (Any customer may create a transaction it is not a buyer, seller or broker of, and is
// then its partner party; only an approved partner has these powers.) An existing account
// becomes a partner.
func (e *Emulator) AddPartner(email string) Account {
	return e.addAccount(email, true)
}

func (e *Emulator) addAccount(email string, partner bool) Account {
	if !validEmail(email) {
		panic(fmt.Sprintf("escrowtest: %q is not an e-mail address", email))
	}
	e.lock()
	defer e.mu.Unlock()
	a := e.st.ensureAccount(email, e.now)
	a.partner = a.partner || partner
	acct := Account{ID: a.id, Email: a.email}
	if a.passwordHash == nil {
		acct.Password = issuePassword(a)
	}
	_, acct.APIKey = e.st.issueKey(a, "escrowtest", e.now)
	return acct
}

// VerifyCustomer marks a customer's identity verified, and their company too when company
// is true, as the provider's checks would. Verification lifts the credit-card limit and
// shows in /partner/customers?verification_status.
func (e *Emulator) VerifyCustomer(email string, company bool) error {
	e.lock()
	defer e.mu.Unlock()
	a := e.st.accountByEmail(email)
	if a == nil {
		return notFound("no customer %s", email)
	}
	a.verifiedPersonal = true
	a.verifiedCompany = a.verifiedCompany || company
	return nil
}

// ApprovePayment makes the buyer's funds arrive, however the buyer chose to pay: what the
// buyer pays is paid in, every schedule entry shows secured, and the payment_received and
// payment_approved events fire. Every party must have agreed.
func (e *Emulator) ApprovePayment(txID int64) error {
	return e.onTransaction(txID, e.fund)
}

// RejectPayment makes the buyer's payment fail: the payment_rejected event fires and the
// buyer may choose a payment method again.
func (e *Emulator) RejectPayment(txID int64) error {
	return e.onTransaction(txID, e.rejectPayment)
}

func (e *Emulator) onTransaction(txID int64, do func(*transaction) error) error {
	e.lock()
	defer e.mu.Unlock()
	tx := e.st.txs[txID]
	if tx == nil {
		return notFound("no transaction %d", txID)
	}
	return do(tx)
}

// Advance moves the emulator's clock forward by d. Inspection periods that end are
// auto-accepted, with their events, before Advance returns; rate-limit windows move too.
// It panics when d is negative.
func (e *Emulator) Advance(d time.Duration) {
	if d < 0 {
		panic("escrowtest: Advance with a negative duration")
	}
	e.clock.advance(d)
	e.lock() // applies what the new time does
	e.mu.Unlock()
}

// Now returns the emulator's current time.
func (e *Emulator) Now() time.Time { return e.clock.now() }

// SetRateLimit changes the rate limit and starts every count afresh. A limit of 0 or less
// turns rate limiting off.
func (e *Emulator) SetRateLimit(limit int, window time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.limiter = newRateLimiter(limit, window)
}

// InjectFault adds a fault; faults apply in the order they were added. It fails when the
// fault is malformed.
func (e *Emulator) InjectFault(f Fault) error {
	_, err := e.faults.add(f)
	return err
}

// Faults returns the faults standing, in the order they apply, each with the id that
// removes it.
func (e *Emulator) Faults() []ActiveFault { return e.faults.list() }

// RemoveFault removes one fault, by the id Faults gives it, and reports whether it stood.
func (e *Emulator) RemoveFault(id int64) bool { return e.faults.remove(id) }

// ClearFaults removes every fault.
func (e *Emulator) ClearFaults() { e.faults.clear() }

// Deliveries returns the webhook calls made so far, in order. Calls still queued are not
// included: see FlushWebhooks.
func (e *Emulator) Deliveries() []Delivery { return e.hooks.deliveries() }

// FlushWebhooks waits until every webhook call queued so far has been made (or has
// failed), or ctx ends.
func (e *Emulator) FlushWebhooks(ctx context.Context) error { return e.hooks.flush(ctx) }
