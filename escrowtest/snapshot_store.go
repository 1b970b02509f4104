package escrowtest

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The store's records to and from their snapshot form. From the snapshot, every
// reference between records is checked (a party's account, a schedule's payer, a
// timeline entry's item), and every id counter against the ids in use, so that a restored
// emulator never looks up a record that is not there nor hands out an id twice.

func (s *store) snapshotAccounts() []snapAccount {
	out := []snapAccount{}
	for _, id := range slices.Sorted(maps.Keys(s.accounts)) {
		a := s.accounts[id]
		p := a.profile
		sa := snapAccount{
			ID: a.id, Email: a.email, PasswordHash: a.passwordHash, Keys: []snapKey{}, Partner: a.partner, Created: a.created,
			CreatedBy: a.createdBy, VerifiedPersonal: a.verifiedPersonal, VerifiedCompany: a.verifiedCompany,
			Methods: slices.Clone(a.methods), Webhooks: []snapWebhook{},
			Profile: snapProfile{
				FirstName: p.firstName, MiddleName: p.middleName, LastName: p.lastName, Phone: p.phone, Address: p.address,
				ShippingAddress: p.shippingAddress, CompanyName: p.companyName, CompanyAddress: p.companyAddress,
				DateOfBirth: p.dateOfBirth, TaxNumbers: p.taxNumbers, IdentificationDocuments: p.identificationDocuments,
			},
		}
		for _, k := range a.keys {
			sa.Keys = append(sa.Keys, snapKey{ID: k.id, Name: k.name, Hash: k.hash, LastFour: k.lastFour, Created: k.created, Active: k.active})
		}
		for _, h := range a.webhooks {
			sa.Webhooks = append(sa.Webhooks, snapWebhook{ID: h.id, URL: h.url})
		}
		out = append(out, sa)
	}
	return out
}

func (s *store) snapshotTransactions() []snapTransaction {
	out := []snapTransaction{}
	for _, tx := range s.txOrder {
		st := snapTransaction{
			ID: tx.id, Creator: tx.creator, Currency: tx.currency, Description: tx.description, Reference: tx.reference,
			Created: tx.created, Closed: tx.closed, Parties: []snapParty{}, Items: []snapItem{}, Cancelled: tx.cancelled,
			Completed: tx.completed, Funded: tx.funded, PaymentMethod: tx.paymentMethod, WireSent: tx.wireSent,
			Timeline: []snapEntry{}, Delegated: []snapDelegated{},
			Money: snapLedger{In: tx.money.in, Out: tx.money.out, Fees: tx.money.fees, Withheld: tx.money.withheld},
		}
		for _, p := range tx.parties {
			st.Parties = append(st.Parties, snapParty{ID: p.id, Role: p.role, Account: p.account, Agreed: p.agreed,
				SelfAgreed: p.selfAgreed, Initiator: p.initiator, HiddenFrom: p.hiddenFrom, Method: p.method})
		}
		for _, it := range tx.items {
			st.Items = append(st.Items, snapshotItem(it))
		}
		for _, t := range tx.timeline {
			st.Timeline = append(st.Timeline, snapEntry{ID: t.id, Event: t.event, Date: t.date, Item: t.item, Actor: t.actor, Detail: t.detail})
		}
		for _, d := range tx.delegated {
			st.Delegated = append(st.Delegated, snapDelegated{At: d.at, Endpoint: d.endpoint, Partner: d.partner, As: d.as, Status: d.status})
		}
		out = append(out, st)
	}
	return out
}

func snapshotItem(it *item) snapItem {
	x := it.extra
	si := snapItem{
		ID: it.id, Title: it.title, Description: it.description, Type: it.typ, Category: it.category,
		InspectionPeriod: it.inspectionPeriod, Quantity: it.quantity, Schedule: []snapSchedule{}, Fees: []snapFee{},
		Flags: flagNames(it.flags), HiddenFrom: it.hiddenFrom, HasVisibility: it.hasVisibility,
		InspectionEnds: it.inspectionEnds, ReturnEnds: it.returnEnds,
		Extra: snapExtra{WithContent: x.withContent, TitleCollection: x.titleCollection, LienHolderPayoff: x.lienHolderPayoff,
			VIN: x.vin, Odometer: x.odometer, Make: x.make, Model: x.model, Year: x.year},
	}
	if si.Flags == nil {
		si.Flags = []string{}
	}
	for _, s := range it.schedule {
		si.Schedule = append(si.Schedule, snapSchedule{Amount: s.amount, Payer: s.payer, Beneficiary: s.beneficiary, Due: s.due,
			Secured: s.secured, PaidIn: s.paidIn, Disbursed: s.disbursed, Refunded: s.refunded})
	}
	for _, f := range it.fees {
		si.Fees = append(si.Fees, snapFee{Type: f.typ, Payer: f.payer, Halves: f.halves, Amount: f.amount, PaidIn: f.paidIn, Settled: f.settled})
	}
	return si
}

func (s *store) snapshotReports() []snapReport {
	out := []snapReport{}
	for _, r := range s.reports {
		out = append(out, snapReport{TaskID: r.taskID, Partner: r.partner, Created: r.created, CSV: string(r.csv)})
	}
	return out
}

func (s *store) snapshotPayments() []snapCardPayment {
	out := []snapCardPayment{}
	for _, p := range s.payments {
		out = append(out, snapCardPayment{Out: p.out, Customer: p.customer, TX: p.tx, Amount: p.amount, Created: p.created})
	}
	return out
}

// store rebuilds the store a snapshot describes, checking it whole first.
func (snap *snapshot) store() (*store, error) {
	st := newStore()
	st.ids = snap.IDs.ids()
	for i, sa := range snap.Accounts {
		a, err := st.restoreAccount(sa)
		if err != nil {
			return nil, fmt.Errorf("accounts[%d] (%d): %v", i, sa.ID, err)
		}
		st.accounts[a.id], st.byEmail[a.email] = a, a
	}
	for i, sa := range snap.Accounts {
		if _, ok := st.accounts[sa.CreatedBy]; sa.CreatedBy != 0 && !ok {
			return nil, fmt.Errorf("accounts[%d] (%d): created_by: no account %d", i, sa.ID, sa.CreatedBy)
		}
	}
	for i, stx := range snap.Transactions {
		tx, err := st.restoreTransaction(stx)
		if err != nil {
			return nil, fmt.Errorf("transactions[%d] (%d): %v", i, stx.ID, err)
		}
		st.txs[tx.id] = tx
		st.txOrder = append(st.txOrder, tx)
		if !tx.isClosed() && slices.ContainsFunc(tx.goods(), inspecting) {
			st.inspecting[tx.id] = tx
		}
	}
	slices.SortFunc(st.txOrder, func(a, b *transaction) int { return cmp.Compare(a.id, b.id) })
	if err := st.restoreOthers(snap); err != nil {
		return nil, err
	}
	if err := st.checkCounters(); err != nil {
		return nil, fmt.Errorf("ids: %v", err)
	}
	return st, nil
}

// restoreAccount rebuilds one account; references to other accounts are checked after.
func (s *store) restoreAccount(sa snapAccount) (*account, error) {
	switch {
	case sa.ID <= 0 || s.accounts[sa.ID] != nil:
		return nil, fmt.Errorf("id %d is not positive or is there twice", sa.ID)
	case !validEmail(sa.Email) || sa.Email != strings.ToLower(sa.Email) || s.byEmail[sa.Email] != nil:
		return nil, fmt.Errorf("email %q is not a lowercase address or is there twice", sa.Email)
	case sa.PasswordHash != nil && len(sa.PasswordHash) != len(hashSecret("")):
		return nil, fmt.Errorf("password_hash is not a SHA-256 hash")
	case len(sa.Keys) > maxAPIKeys || len(sa.Webhooks) > maxWebhooks:
		return nil, fmt.Errorf("more than %d api_keys or %d webhooks", maxAPIKeys, maxWebhooks)
	}
	p := sa.Profile
	a := &account{
		id: sa.ID, email: sa.Email, passwordHash: sa.PasswordHash, partner: sa.Partner, created: sa.Created, createdBy: sa.CreatedBy,
		verifiedPersonal: sa.VerifiedPersonal, verifiedCompany: sa.VerifiedCompany,
		profile: customerProfile{
			firstName: p.FirstName, middleName: p.MiddleName, lastName: p.LastName, phone: p.Phone, address: p.Address,
			shippingAddress: p.ShippingAddress, companyName: p.CompanyName, companyAddress: p.CompanyAddress,
			dateOfBirth: p.DateOfBirth, taxNumbers: p.TaxNumbers, identificationDocuments: p.IdentificationDocuments,
		},
	}
	return a, restoreSettings(a, sa)
}

// restoreSettings rebuilds an account's keys, webhooks and saved disbursement methods.
func restoreSettings(a *account, sa snapAccount) error {
	for j, k := range sa.Keys {
		if len(k.Hash) != len(hashSecret("")) || k.ID <= 0 {
			return fmt.Errorf("api_keys[%d]: no SHA-256 hash or no id", j)
		}
		a.keys = append(a.keys, &apiKey{id: k.ID, name: k.Name, hash: k.Hash, lastFour: k.LastFour, created: k.Created, active: k.Active})
	}
	for j, h := range sa.Webhooks {
		if h.ID <= 0 || !strings.HasPrefix(h.URL, "http") {
			return fmt.Errorf("webhooks[%d]: no id or no http URL", j)
		}
		a.webhooks = append(a.webhooks, &webhook{id: h.ID, url: h.URL})
	}
	for j, m := range sa.Methods {
		if m == nil || m.ID <= 0 {
			return fmt.Errorf("disbursement_methods[%d]: no id", j)
		}
		a.methods = append(a.methods, m)
	}
	return nil
}

// restoreTransaction rebuilds one transaction, its references checked against the
// accounts already rebuilt.
func (s *store) restoreTransaction(stx snapTransaction) (*transaction, error) {
	switch {
	case stx.ID <= 0 || s.txs[stx.ID] != nil:
		return nil, fmt.Errorf("id %d is not positive or is there twice", stx.ID)
	case s.accounts[stx.Creator] == nil:
		return nil, fmt.Errorf("creator: no account %d", stx.Creator)
	case !slices.Contains(currencies, stx.Currency):
		return nil, fmt.Errorf("currency %q is not one of %s", stx.Currency, strings.Join(currencies, ", "))
	}
	tx := &transaction{
		id: stx.ID, creator: stx.Creator, currency: stx.Currency, description: stx.Description, reference: stx.Reference,
		created: stx.Created, closed: stx.Closed, cancelled: stx.Cancelled, completed: stx.Completed, funded: stx.Funded,
		paymentMethod: stx.PaymentMethod, wireSent: stx.WireSent,
		money: ledger{in: stx.Money.In, out: stx.Money.Out, fees: stx.Money.Fees, withheld: stx.Money.Withheld},
	}
	for j, sp := range stx.Parties {
		p, err := s.restoreParty(sp)
		if err != nil {
			return nil, fmt.Errorf("parties[%d]: %v", j, err)
		}
		tx.parties = append(tx.parties, p)
	}
	if tx.party(roleBuyer) == nil || tx.party(roleSeller) == nil {
		return nil, fmt.Errorf("parties: a transaction has a buyer and a seller")
	}
	for j, si := range stx.Items {
		it, err := s.restoreItem(si)
		if err != nil {
			return nil, fmt.Errorf("items[%d] (%d): %v", j, si.ID, err)
		}
		tx.items = append(tx.items, it)
	}
	if len(tx.goods()) == 0 {
		return nil, fmt.Errorf("items: a transaction has goods")
	}
	if err := s.restoreJournal(tx, stx); err != nil {
		return nil, err
	}
	return tx, nil
}

var roles = []string{roleBuyer, roleSeller, roleBroker, rolePartner}

func (s *store) restoreParty(sp snapParty) (*party, error) {
	a := s.accounts[sp.Account]
	switch {
	case sp.ID <= 0 || !slices.Contains(roles, sp.Role):
		return nil, fmt.Errorf("no id, or role %q is not one of %s", sp.Role, strings.Join(roles, ", "))
	case a == nil:
		return nil, fmt.Errorf("account: no account %d", sp.Account)
	case sp.Method != 0 && !slices.ContainsFunc(a.methods, func(m *wireDisbursementMethod) bool { return m.ID == sp.Method }):
		return nil, fmt.Errorf("disbursement_method: account %d has no method %d", sp.Account, sp.Method)
	}
	if err := s.knownAccounts(sp.HiddenFrom); err != nil {
		return nil, fmt.Errorf("hidden_from: %v", err)
	}
	return &party{id: sp.ID, role: sp.Role, account: sp.Account, agreed: sp.Agreed, selfAgreed: sp.SelfAgreed,
		initiator: sp.Initiator, hiddenFrom: sp.HiddenFrom, method: sp.Method}, nil
}

func (s *store) knownAccounts(ids []int64) error {
	for _, id := range ids {
		if s.accounts[id] == nil {
			return fmt.Errorf("no account %d", id)
		}
	}
	return nil
}

func (s *store) restoreItem(si snapItem) (*item, error) {
	if si.ID <= 0 || itemRule(si.Type).name == "" {
		return nil, fmt.Errorf("no id, or type %q is not an item type", si.Type)
	}
	x := si.Extra
	it := &item{
		id: si.ID, title: si.Title, description: si.Description, typ: si.Type, category: si.Category,
		inspectionPeriod: si.InspectionPeriod, quantity: si.Quantity, hiddenFrom: si.HiddenFrom, hasVisibility: si.HasVisibility,
		inspectionEnds: si.InspectionEnds, returnEnds: si.ReturnEnds,
		extra: extraAttributes{withContent: x.WithContent, titleCollection: x.TitleCollection, lienHolderPayoff: x.LienHolderPayoff,
			vin: x.VIN, odometer: x.Odometer, make: x.Make, model: x.Model, year: x.Year},
	}
	var err error
	if it.flags, err = parseFlags(si.Flags); err != nil {
		return nil, err
	}
	if err := s.knownAccounts(si.HiddenFrom); err != nil {
		return nil, fmt.Errorf("hidden_from: %v", err)
	}
	return it, s.restoreMoney(it, si)
}

// parseFlags reads an item's flags by their names.
func parseFlags(names []string) (itemFlag, error) {
	var flags itemFlag
	for _, name := range names {
		i := slices.IndexFunc(itemStates, func(s itemState) bool { return s.name == name })
		if i < 0 {
			return 0, fmt.Errorf("flags: %q is not an item flag", name)
		}
		flags |= itemStates[i].flag
	}
	return flags, nil
}

// restoreMoney rebuilds an item's schedule and fees.
func (s *store) restoreMoney(it *item, si snapItem) error {
	for j, sc := range si.Schedule {
		if sc.Amount < 0 || s.accounts[sc.Payer] == nil || s.accounts[sc.Beneficiary] == nil {
			return fmt.Errorf("schedule[%d]: a negative amount, or a payer or beneficiary that is no account", j)
		}
		it.schedule = append(it.schedule, &schedule{amount: sc.Amount, payer: sc.Payer, beneficiary: sc.Beneficiary, due: sc.Due,
			secured: sc.Secured, paidIn: sc.PaidIn, disbursed: sc.Disbursed, refunded: sc.Refunded})
	}
	if len(it.schedule) == 0 {
		return fmt.Errorf("schedule: an item has one")
	}
	for j, f := range si.Fees {
		if f.Amount < 0 || s.accounts[f.Payer] == nil || f.Halves < 0 || f.Halves > 2 {
			return fmt.Errorf("fees[%d]: a negative amount, halves other than 0, 1 or 2, or a payer that is no account", j)
		}
		it.fees = append(it.fees, &fee{typ: f.Type, payer: f.Payer, halves: f.Halves, amount: f.Amount, paidIn: f.PaidIn, settled: f.Settled})
	}
	return nil
}

// restoreJournal rebuilds the timeline and the As-Customer calls of a transaction.
func (s *store) restoreJournal(tx *transaction, stx snapTransaction) error {
	for j, e := range stx.Timeline {
		hasItem := e.Item == 0 || slices.ContainsFunc(tx.items, func(it *item) bool { return it.id == e.Item })
		if e.ID <= 0 || !hasItem || (e.Actor != 0 && s.accounts[e.Actor] == nil) {
			return fmt.Errorf("timeline[%d]: no id, or an item or actor that is not there", j)
		}
		tx.timeline = append(tx.timeline, timelineEntry{id: e.ID, event: e.Event, date: e.Date, item: e.Item, actor: e.Actor, detail: e.Detail})
	}
	if len(stx.Delegated) > maxDelegated {
		return fmt.Errorf("as_customer_calls: more than the %d kept", maxDelegated)
	}
	for j, d := range stx.Delegated {
		if s.accounts[d.Partner] == nil {
			return fmt.Errorf("as_customer_calls[%d]: partner: no account %d", j, d.Partner)
		}
		tx.delegated = append(tx.delegated, delegatedCall{at: d.At, endpoint: d.Endpoint, partner: d.Partner, as: d.As, status: d.Status})
	}
	return nil
}

// restoreOthers rebuilds the reports and card payments.
func (s *store) restoreOthers(snap *snapshot) error {
	for i, r := range snap.Reports {
		if s.accounts[r.Partner] == nil || r.TaskID == "" {
			return fmt.Errorf("reports[%d]: no task_id, or partner: no account %d", i, r.Partner)
		}
		s.reports = append(s.reports, &report{taskID: r.TaskID, partner: r.Partner, created: r.Created, csv: []byte(r.CSV)})
	}
	for i, p := range snap.CardPayments {
		if s.accounts[p.Customer] == nil || s.txs[p.TX] == nil || p.Amount < 0 {
			return fmt.Errorf("card_payments[%d]: a customer or transaction that is not there, or a negative amount", i)
		}
		s.payments = append(s.payments, cardPayment{out: p.Out, customer: p.Customer, tx: p.TX, amount: p.Amount, created: p.Created})
	}
	return nil
}

// checkCounters refuses id counters that would hand out an id already in use.
func (s *store) checkCounters() error {
	var used ids
	note := func(counter *int64, id int64) { *counter = max(*counter, id+1) }
	for _, a := range s.accounts {
		note(&used.customer, a.id)
		for _, k := range a.keys {
			note(&used.apiKey, k.id)
		}
		for _, h := range a.webhooks {
			note(&used.webhook, h.id)
		}
		for _, m := range a.methods {
			note(&used.method, m.ID)
		}
		for _, n := range a.profile.taxNumbers {
			note(&used.taxNumber, n.ID)
		}
	}
	for _, tx := range s.txs {
		note(&used.transaction, tx.id)
		for _, p := range tx.parties {
			note(&used.party, p.id)
		}
		for _, it := range tx.items {
			note(&used.item, it.id)
		}
		for _, t := range tx.timeline {
			note(&used.entry, t.id)
		}
	}
	for _, c := range []struct {
		name       string
		have, used int64
	}{
		{"customer", s.ids.customer, used.customer}, {"transaction", s.ids.transaction, used.transaction},
		{"item", s.ids.item, used.item}, {"party", s.ids.party, used.party}, {"api_key", s.ids.apiKey, used.apiKey},
		{"webhook", s.ids.webhook, used.webhook}, {"disbursement_method", s.ids.method, used.method},
		{"timeline_entry", s.ids.entry, used.entry}, {"tax_number", s.ids.taxNumber, used.taxNumber},
	} {
		if c.have < c.used || c.have <= 0 {
			return fmt.Errorf("%s is %d: the next id must be positive and past %d, the last in use", c.name, c.have, c.used-1)
		}
	}
	return nil
}
