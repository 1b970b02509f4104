package escrow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// ErrOutcomeUnknown matches an error after which the client could not tell whether a write
// took effect: the request may have been performed, and reading the state afterwards
// neither found its effect nor proved it absent. Match with errors.Is; the error also
// unwraps to the failure itself (a *TransportError, a 5xx *APIError, a *DecodeError).
var ErrOutcomeUnknown = errors.New("escrow: outcome unknown")

// OutcomeUnknownError is the typed form of [ErrOutcomeUnknown]: a write failed in a way
// that may have performed it, and the client could not settle which. Reason says why (the
// state could not be read, it showed a partial effect, or a transaction found by reference
// is not this request's).
type OutcomeUnknownError struct {
	Method, Path string
	Reason       string
	// Err is the failure of the write that left its outcome open.
	Err error
}

func (e *OutcomeUnknownError) Error() string {
	return fmt.Sprintf("escrow: %s %s: outcome unknown: %s: %v", e.Method, e.Path, e.Reason, e.Err)
}

// Is matches ErrOutcomeUnknown.
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// Unwrap returns the failure of the write.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// presence is what reading the state says of a write's effect.
type presence int

const (
	// undetermined: the state could not be read, or does not tell.
	undetermined presence = iota
	// present: the effect is there, and it is the caller's.
	present
	// absent: the effect is provably not there; sending the write again is safe.
	absent
)

// settler describes one covered write for settle: how to send it, and how to read whether
// it took effect. read returns the result to hand back when the effect is present.
type settler[T any] struct {
	method, path string // for errors and logs
	send         func(ctx context.Context) (*T, error)
	read         func(ctx context.Context) (*T, presence, string, error)
}

// settle sends a write and, when it fails in a way that may have performed it, reads the
// state before doing anything else: an effect that is there is a success, one provably
// absent is sent again (up to the client's retries, with its backoff; past them, or when
// the context ends in the wait, the last answer is the error, saying it was not performed
// and how many times it was sent), and only what stays undetermined is an
// *OutcomeUnknownError. A refusal (4xx) after an ambiguous attempt is
// checked the same way: it is usually the server refusing to do twice what the first
// attempt did.
//
// Sending again is safe for every covered write because each is a state transition the
// server refuses to repeat (an action, marking a wire sent), or sets a state to a value
// (choosing a payment or disbursement method), or is checked against the list it would add
// to (a webhook).
//
// With an observer, the write is one call: the sends join it, and each read is a call of
// its own inside it (see observe.go).
func settle[T any](ctx context.Context, c *Client, s settler[T]) (*T, error) {
	if c.observer == nil {
		return settleObserved(ctx, c, s, nil)
	}
	ob := c.observe(ctx, s.method, s.path)
	res, err := settleObserved(ob.ctx, c, s, ob)
	ob.end(err)
	return res, err
}

// settleObserved is settle's loop; ob, when not nil, observes the write as one call.
func settleObserved[T any](ctx context.Context, c *Client, s settler[T], ob *callRecord) (*T, error) {
	sendCtx := ctx
	if ob != nil {
		sendCtx = ob.joining()
	}
	st := &settling[T]{ctx: ctx, c: c, s: s, ob: ob, sent: &sendCount{}}
	// The HTTP attempts of every send are numbered as one sequence (the log's attempt=),
	// and counted for the error when none was performed.
	sendCtx = context.WithValue(sendCtx, sendCountKey{}, st.sent)
	for attempt := 0; ; attempt++ {
		res, err := s.send(sendCtx)
		stop, latest := judgeSend(err, st.ambiguous)
		switch {
		case stop && err != nil:
			return nil, err
		case stop:
			return res, nil
		}
		st.ambiguous = latest
		if got, done, err := st.readBack(attempt, err); done {
			return got, err
		}
	}
}

// settling is one settled write between its sends: what reading its state back needs.
type settling[T any] struct {
	ctx       context.Context
	c         *Client
	s         settler[T]
	ob        *callRecord
	sent      *sendCount
	ambiguous error // the latest failure that may have performed the write
}

// readBack reads the state after a send that may have performed the write. done says the
// write is settled, with its result; otherwise it is to be sent again.
func (st *settling[T]) readBack(attempt int, sendErr error) (_ *T, done bool, _ error) {
	if st.ctx.Err() != nil {
		return nil, true, st.unknown("the context ended before the state could be read")
	}
	readStart := time.Now()
	got, p, why, readErr := st.s.read(st.ctx)
	st.ob.settlingRead(readStart, p, readErr)
	switch {
	case readErr != nil:
		return nil, true, st.unknown("reading the state failed: " + st.c.scrubError(readErr).Error())
	case p == present:
		st.log("escrow: write settled: its effect is there")
		return got, true, nil
	case p == absent:
		done, err := st.notThere(attempt, sendErr)
		return nil, done, err
	}
	return nil, true, st.unknown(why)
}

// notThere handles a write read back as not performed: the send's refusal stands when
// no earlier attempt may have performed it; otherwise the write is sent again after a
// backoff while retries are left. done is false when it is to be sent again.
func (st *settling[T]) notThere(attempt int, sendErr error) (done bool, _ error) {
	switch {
	case sendErr != st.ambiguous:
		return true, sendErr // refused, and not done by an earlier attempt either
	case attempt >= st.c.maxRetries:
		// Every read showed it not done: the outcome is known, and the answer is the
		// last one the server gave.
		return true, notPerformed(sendErr, st.sent.n, "no retries are left", nil)
	}
	st.log("escrow: write settled: not performed, sending again")
	wait := st.c.backoffStep(attempt)
	st.ob.retry(Retry{At: time.Now(), Reason: RetryNotPerformed, Wait: wait})
	if cause := sleep(st.ctx, wait); cause != nil {
		return true, notPerformed(sendErr, st.sent.n, "the context ended before sending again", cause)
	}
	return false, nil
}

// unknown is the error of a write whose outcome could not be read, for the reason given.
func (st *settling[T]) unknown(reason string) error {
	return &OutcomeUnknownError{Method: st.s.method, Path: st.s.path, Reason: reason, Err: st.ambiguous}
}

// log records a step of settling at info level.
func (st *settling[T]) log(msg string) {
	st.c.logger.LogAttrs(st.ctx, slog.LevelInfo, msg,
		slog.String("method", st.s.method), slog.String("path", st.s.path), slog.Int("attempt", st.sent.n))
}

// judgeSend says whether a send's result ends settling (a success; a 2xx whose answer is
// unreadable, performed for certain, which the *DecodeError says; a failure that performed
// nothing), or asks for the state to be read, and returns the latest failure that may have
// performed the write.
func judgeSend(err, ambiguous error) (stop bool, _ error) {
	var de *DecodeError
	switch {
	case err == nil, errors.As(err, &de):
		return true, ambiguous
	case mayHaveTakenEffect(err):
		return false, err
	case ambiguous != nil && isRefusal(err):
		return false, ambiguous // possibly our own earlier attempt, performed after all
	}
	return true, ambiguous
}

// sendCount counts the HTTP attempts of one settled write across its sends; the request
// pipeline finds it in the send's context (sendCountKey) and continues its numbering.
type sendCount struct{ n int }

// sendCountKey is the context key of a settled write's sendCount. It carries no
// configuration: only settle sets it, for the sends it makes.
type sendCountKey struct{}

// priorAttempts returns the attempts already made by the write ctx belongs to, and a
// function that records the attempts made since; both do nothing outside a settled write.
func priorAttempts(ctx context.Context) (int, func(total int)) {
	sc, _ := ctx.Value(sendCountKey{}).(*sendCount)
	if sc == nil {
		return 0, func(int) {}
	}
	return sc.n, func(total int) { sc.n = total }
}

// notPerformedError is the last answer to a write that the state, read after each
// attempt, showed not performed: the outcome is known, so the error is the server's answer
// (an *APIError, a *TransportError) with how many times the write was sent and why the
// client stopped. It is no ErrOutcomeUnknown.
type notPerformedError struct {
	err      error  // the last answer
	attempts int    // HTTP attempts, every send counted
	stop     string // why no more were made
	cause    error  // the context's error when it ended the sends; nil otherwise
}

// notPerformed builds the error of a write read back as not performed after each of its
// attempts. A *TransportError in it no longer says the outcome is unknown.
func notPerformed(last error, attempts int, stop string, cause error) *notPerformedError {
	if te, ok := last.(*TransportError); ok {
		known := *te
		known.OutcomeUnknown, known.Attempts = false, attempts
		last = &known
	}
	return &notPerformedError{err: last, attempts: attempts, stop: stop, cause: cause}
}

func (e *notPerformedError) Error() string {
	times := fmt.Sprintf("%d times", e.attempts)
	if e.attempts == 1 {
		times = "once"
	}
	return fmt.Sprintf("%v (not performed: sent %s, and the state read after each attempt showed no effect; %s)", e.err, times, e.stop)
}

// Unwrap returns the last answer, and the context's error when it stopped the sends.
func (e *notPerformedError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.err}
	}
	return []error{e.err, e.cause}
}

// isRefusal reports a 4xx answer other than 429: the server looked at the request and
// declined it.
func isRefusal(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.StatusCode >= 400 && ae.StatusCode < 500 && ae.StatusCode != http.StatusTooManyRequests
}

// actor is who performs a write: the client's own account, or the customer an approved
// partner acts for with AsCustomer. Effects count only when they are the actor's.
type actor struct {
	email      string // the client's account
	asCustomer string
}

func (c *Client) actorOf(opts []RequestOption) actor {
	var ro requestOptions
	for _, opt := range opts {
		opt(&ro)
	}
	return actor{email: c.auth.email, asCustomer: ro.asCustomer}
}

// is reports whether a customer reference in a transaction read by the client's own
// account names the actor: "me" is the client itself.
func (a actor) is(customer string) bool {
	if a.asCustomer != "" {
		return strings.EqualFold(customer, a.asCustomer)
	}
	return customer == "me" || strings.EqualFold(customer, a.email)
}

// isClient reports whether a customer reference names the client's own account.
func (a actor) isClient(customer string) bool {
	return customer == "me" || strings.EqualFold(customer, a.email)
}

// actionPresence says whether a transaction, read after an ambiguous action, shows the
// action's effect, and that the effect is the actor's.
func actionPresence(tx *Transaction, who actor, action Action, itemID int64) (presence, string) {
	mine := actorParty(tx, who)
	switch action {
	case ActionAgree:
		return agreePresence(mine)
	case ActionCancel:
		// Only cancel sets it; who cancelled is not shown, but nobody else's cancel can
		// make ours fail to perform.
		return presentIf(tx.Cancelled()), ""
	}
	return goodsActionPresence(tx, mine, action, itemID)
}

// actorParty is the actor's party in a transaction, or nil when it is not among them.
func actorParty(tx *Transaction, who actor) *Party {
	for i := range tx.Parties {
		if who.is(tx.Parties[i].Customer) {
			return &tx.Parties[i]
		}
	}
	return nil
}

// goodsActionPresence says whether an action on the goods shows, as the actor's: its row
// of the action table (actions.go) names the item flag it sets and the roles that perform it.
func goodsActionPresence(tx *Transaction, mine *Party, action Action, itemID int64) (presence, string) {
	rule, known := action.rule()
	if !known || rule.flag == "" {
		return undetermined, fmt.Sprintf("the effect of action %q is not known to the client", action)
	}
	if mine == nil || !slices.Contains(rule.roles, mine.Role) {
		// Another party's doing would look the same: it cannot count as the actor's.
		return undetermined, fmt.Sprintf("the actor is not the %s that performs %s", joinRoles(rule.roles), action)
	}
	if len(rule.roles) > 1 {
		// The flag does not say which of the roles set it: it may be another party's.
		return undetermined, fmt.Sprintf("%s is performed by the %s: the flag does not say whose it is", action, joinRoles(rule.roles))
	}
	return goodsPresence(tx, action, itemID, rule.flag)
}

// presentIf is present when an effect shows, absent when it does not.
func presentIf(shows bool) presence {
	if shows {
		return present
	}
	return absent
}

// agreePresence reads the actor's agreement from its party.
func agreePresence(mine *Party) (presence, string) {
	if mine == nil {
		return undetermined, "the actor is not among the parties read"
	}
	return presentIf(mine.Agreed), ""
}

// goodsPresence reads an action on the goods from the flag it sets on the items it
// applies to: all of them show it, or none.
func goodsPresence(tx *Transaction, action Action, itemID int64, flag string) (presence, string) {
	done, pending := countEffect(tx, itemID, flag)
	switch {
	case done > 0 && pending == 0:
		return present, ""
	case done == 0 && pending > 0:
		return absent, ""
	case done == 0:
		return undetermined, "no item the action applies to was read"
	}
	return undetermined, fmt.Sprintf("%s shows on %d items and not on %d", action, done, pending)
}

// joinRoles names a set of roles: "buyer or seller".
func joinRoles(roles []Role) string {
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = string(r)
	}
	return strings.Join(names, " or ")
}

// countEffect counts the items an action applies to (the one item, or every goods item of
// the transaction) that show its flag, and those that do not.
func countEffect(tx *Transaction, itemID int64, flag string) (done, pending int) {
	for i := range tx.Items {
		it := &tx.Items[i]
		if (itemID != 0 && it.ID != itemID) || (itemID == 0 && !it.Type.Transferable()) {
			continue
		}
		if it.Status.Flag(flag) {
			done++
		} else {
			pending++
		}
	}
	return done, pending
}

// settleAction sends an action, k, on transaction id or its item itemID (0 for the whole
// transaction) and settles an ambiguous failure by reading the transaction.
func (s *TransactionsService) settleAction(ctx context.Context, id, itemID int64, req *ActionRequest, k call) (*Transaction, error) {
	who := s.client.actorOf(k.opts)
	return settle(ctx, s.client, settler[Transaction]{
		method: k.route.Method, path: k.route.path(),
		send: func(ctx context.Context) (*Transaction, error) { return fetch[Transaction](ctx, s.client, k) },
		read: func(ctx context.Context) (*Transaction, presence, string, error) {
			// Read as the client itself: the API takes As-Customer on writes only.
			tx, err := s.Get(ctx, id)
			if err != nil {
				return nil, undetermined, "", err
			}
			p, why := actionPresence(tx, who, req.Action, itemID)
			return tx, p, why, nil
		},
	})
}

// settleChoosePayment chooses a payment method and settles an ambiguous failure. The
// choice leaves nothing to read but is a setting: choosing the same method again answers
// the same page, so an unfunded transaction is asked again; a funded or closed one no
// longer tells.
func (s *TransactionsService) settleChoosePayment(ctx context.Context, id int64, k call) (*LandingPage, error) {
	return settle(ctx, s.client, settler[LandingPage]{
		method: k.route.Method, path: k.route.path(),
		send: func(ctx context.Context) (*LandingPage, error) { return fetch[LandingPage](ctx, s.client, k) },
		read: func(ctx context.Context) (*LandingPage, presence, string, error) {
			tx, err := s.Get(ctx, id)
			if err != nil {
				return nil, undetermined, "", err
			}
			if tx.Funded() || tx.Cancelled() {
				return nil, undetermined, "the transaction is funded or cancelled: the choice can no longer be read", nil
			}
			return nil, absent, "", nil
		},
	})
}

// settleWireSent marks a wire sent and settles an ambiguous failure by reading the
// timeline, where the API records payment_sent once.
func (s *TransactionsService) settleWireSent(ctx context.Context, id int64, k call) (*WireSent, error) {
	return settle(ctx, s.client, settler[WireSent]{
		method: k.route.Method, path: k.route.path(),
		send: func(ctx context.Context) (*WireSent, error) { return fetch[WireSent](ctx, s.client, k) },
		read: func(ctx context.Context) (*WireSent, presence, string, error) {
			tl, err := s.ListTimelineEntries(ctx, id)
			if err != nil {
				return nil, undetermined, "", err
			}
			for _, e := range tl.Entries {
				if e.Event == "payment_sent" {
					// The answer is the transaction as the API renders it after the mark.
					tx, err := s.Get(ctx, id)
					if err != nil {
						return nil, undetermined, "", err
					}
					return &WireSent{Transaction: tx}, present, "", nil
				}
			}
			tx, err := s.Get(ctx, id)
			if err != nil {
				return nil, undetermined, "", err
			}
			if tx.Funded() || tx.Cancelled() {
				return nil, undetermined, "the transaction is funded or cancelled and its timeline shows no wire", nil
			}
			return nil, absent, "", nil
		},
	})
}

// settleDisbursement selects or adds a disbursement method and settles an ambiguous
// failure by reading the transaction's methods: the one selected is the caller's own (the
// endpoint answers for the caller only).
func (s *TransactionsService) settleDisbursement(ctx context.Context, id int64, dm *DisbursementMethod, k call) (*DisbursementMethods, error) {
	return settle(ctx, s.client, settler[DisbursementMethods]{
		method: k.route.Method, path: k.route.path(),
		send: func(ctx context.Context) (*DisbursementMethods, error) {
			return fetch[DisbursementMethods](ctx, s.client, k)
		},
		read: func(ctx context.Context) (*DisbursementMethods, presence, string, error) {
			// Read without the write's options: a WithResponse there describes the write's
			// answer, not this read's.
			got, err := s.GetDisbursementMethods(ctx, id)
			if err != nil {
				return nil, undetermined, "", err
			}
			if sel := got.SelectedDisbursementMethod; sel != nil && sameMethod(sel, dm) {
				return got, present, "", nil
			}
			return nil, absent, "", nil
		},
	})
}

// sameMethod reports whether a selected method is the one asked for: the same id when a
// saved one was selected, else the same type and every detail the caller gave. A method
// that differs in any of them (an old IBAN, sort code or account name) is another account:
// taking it for the caller's would pay out to it. A detail the caller left empty is not
// compared, since the server may fill it in (a bank's name from its routing number); the
// cost of a false "not the same" is only one more write setting the same method.
func sameMethod(sel, want *DisbursementMethod) bool {
	if want.ID != 0 {
		return sel.ID == want.ID
	}
	if sel.Type != want.Type {
		return false
	}
	for _, detail := range methodDetails {
		if w := detail(want); w != "" && detail(sel) != w {
			return false
		}
	}
	return true
}

// methodDetails are the text details of a disbursement method that name its account.
var methodDetails = []func(*DisbursementMethod) string{
	func(m *DisbursementMethod) string { return string(m.Currency) },
	func(m *DisbursementMethod) string { return m.AccountName },
	func(m *DisbursementMethod) string { return m.AccountType },
	func(m *DisbursementMethod) string { return m.BankABARoutingNumber },
	func(m *DisbursementMethod) string { return m.BankAccountNumber },
	func(m *DisbursementMethod) string { return m.BankBranchNumber },
	func(m *DisbursementMethod) string { return m.BankIBAN },
	func(m *DisbursementMethod) string { return m.BankName },
	func(m *DisbursementMethod) string { return m.BankSwiftCode },
	func(m *DisbursementMethod) string { return m.BankSortCode },
	func(m *DisbursementMethod) string { return m.InternationalRoutingCode },
	func(m *DisbursementMethod) string { return m.AdditionalInformation },
	func(m *DisbursementMethod) string { return string(m.ClearingSystemCode) },
	func(m *DisbursementMethod) string { return m.MemberID },
}

// settleWebhook registers a webhook and settles an ambiguous failure by reading the
// caller's webhooks: the URL registered is the effect.
func (s *WebhooksService) settleWebhook(ctx context.Context, customer CustomerRef, rawURL string, k call) (*Webhook, error) {
	return settle(ctx, s.client, settler[Webhook]{
		method: k.route.Method, path: k.route.path(),
		send: func(ctx context.Context) (*Webhook, error) { return fetch[Webhook](ctx, s.client, k) },
		read: func(ctx context.Context) (*Webhook, presence, string, error) {
			list, err := s.List(ctx, customer) // without the write's options, as above
			if err != nil {
				return nil, undetermined, "", err
			}
			for i := len(list.Webhooks) - 1; i >= 0; i-- {
				if list.Webhooks[i].URL == rawURL {
					w := list.Webhooks[i]
					return &w, present, "", nil
				}
			}
			return nil, absent, "", nil
		},
	})
}

// createdMatches reports why a transaction found by reference after an ambiguous Create
// is not the one the request made, or "" when it is: the caller created it (it is the
// partner party) or is the party the request named as itself, and the parties, items,
// amounts and currency are the request's. Anyone can create a transaction with any
// reference that names the caller as a party; such a transaction must never be taken for
// the caller's.
func createdMatches(req *CreateTransactionRequest, tx *Transaction, who actor) string {
	if !strings.EqualFold(string(tx.Currency), string(req.Currency)) {
		return fmt.Sprintf("its currency is %q, not %q", tx.Currency, req.Currency)
	}
	if why := createdByCaller(req, tx, who); why != "" {
		return why
	}
	if why := sameParties(req, tx, who); why != "" {
		return why
	}
	return sameItems(req, tx, who)
}

// sameCustomer reports whether a customer found in a transaction is the one a request
// asked for; the caller's own account may be named "me" or by its address, and so may the
// customer a partner acts for.
func (a actor) sameCustomer(found, asked string) bool {
	if a.isActor(asked) {
		return a.isActor(found)
	}
	return strings.EqualFold(found, asked)
}

// isActor reports whether a customer reference names the client or the customer it acts
// for.
func (a actor) isActor(customer string) bool {
	return a.isClient(customer) || (a.asCustomer != "" && strings.EqualFold(customer, a.asCustomer))
}

// createdByCaller says why a transaction is not the caller's own, or "" when it is. The
// API makes the creator the partner party, so a partner other than the caller means
// another customer created it. Without a partner party shown, the caller must be the party
// the request named as itself.
func createdByCaller(req *CreateTransactionRequest, tx *Transaction, who actor) string {
	owned := false
	for _, p := range tx.Parties {
		if p.Role == RolePartner {
			if !who.isClient(p.Customer) {
				return "another customer created it"
			}
			owned = true
		} else if i := indexParty(req.Parties, p.Role); i >= 0 && who.isActor(req.Parties[i].Customer) && who.sameCustomer(p.Customer, req.Parties[i].Customer) {
			owned = true
		}
	}
	if !owned {
		return "the caller neither created it nor is the party the request named as itself"
	}
	return ""
}

// sameParties says how a transaction's parties (the partner aside) differ from the
// request's, or "" when they do not.
func sameParties(req *CreateTransactionRequest, tx *Transaction, who actor) string {
	for _, p := range tx.Parties {
		if p.Role == RolePartner {
			continue
		}
		i := indexParty(req.Parties, p.Role)
		if i < 0 {
			return fmt.Sprintf("it has a %s the request did not name", p.Role)
		}
		if !who.sameCustomer(p.Customer, req.Parties[i].Customer) {
			return fmt.Sprintf("its %s is not the request's", p.Role)
		}
	}
	for _, p := range req.Parties {
		if _, ok := tx.Party(p.Role); !ok {
			return fmt.Sprintf("it has no %s", p.Role)
		}
	}
	return ""
}

// sameItems says how a transaction's items differ from the request's (type, title,
// payments, payers and beneficiaries), or "" when they do not.
func sameItems(req *CreateTransactionRequest, tx *Transaction, who actor) string {
	if len(tx.Items) != len(req.Items) {
		return fmt.Sprintf("it has %d items, the request %d", len(tx.Items), len(req.Items))
	}
	for i, want := range req.Items {
		if diff := sameItem(i, want, tx.Items[i], who); diff != "" {
			return diff
		}
	}
	return ""
}

// sameItem says how the item i of a transaction differs from the request's, or "".
func sameItem(i int, want ItemInput, got Item, who actor) string {
	if got.Type != want.Type || (want.Title != "" && got.Title != want.Title) || len(got.Schedule) != len(want.Schedule) {
		return fmt.Sprintf("its item %d is not the request's", i)
	}
	for j, ws := range want.Schedule {
		if !samePayment(got.Schedule[j], ws, who) {
			return fmt.Sprintf("the payment %d of its item %d is not the request's", j, i)
		}
	}
	return ""
}

// samePayment reports whether a payment read back is the requested one: its amount, payer
// and beneficiary.
func samePayment(got Schedule, want ScheduleInput, who actor) bool {
	return got.Amount.String() == want.Amount.String() &&
		who.sameCustomer(got.PayerCustomer, want.PayerCustomer) &&
		who.sameCustomer(got.BeneficiaryCustomer, want.BeneficiaryCustomer)
}

func indexParty(ps []PartyInput, role Role) int {
	for i, p := range ps {
		if p.Role == role {
			return i
		}
	}
	return -1
}
