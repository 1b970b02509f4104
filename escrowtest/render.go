package escrowtest

import "slices"

// hiddenCustomer replaces the e-mail address of a party concealed from the reader.
const hiddenCustomer = "hidden"

// view renders a transaction for one reader. The content differs per reader (spec part
// 1); this is the one place that decides what each reader sees:
//   - every customer is shown by e-mail address, the reader too, as the provider's example
//     responses show ("me" is only an input);
//   - a party whose visibility.hidden_from lists the reader appears as "hidden" wherever
//     its address would (party, payer_customer, beneficiary_customer), and its amounts
//     are left out: the fee entries it pays, and the schedule entries it pays unless to
//     the reader (a fee item left with none is left out whole);
//   - broker_fee items are left out for the readers their visibility lists;
//   - partner_fee items are shown only to the partner and to the item's payers;
//   - visibility objects are shown only to the broker and the partner, who set them.
type view struct {
	st     *store
	tx     *transaction
	reader int64
	// all sees everything, as the emulator does: the control API's view for the page.
	all bool
}

// render returns the transaction as the reader sees it.
func (e *Emulator) render(tx *transaction, reader *account) wireTransaction {
	return view{st: e.st, tx: tx, reader: reader.id}.transaction()
}

// customer renders a customer reference.
func (v view) customer(accountID int64) string {
	if v.hidden(accountID) {
		return hiddenCustomer
	}
	return v.st.accounts[accountID].email
}

// hidden reports whether a party's details are concealed from the reader.
func (v view) hidden(accountID int64) bool {
	if v.all {
		return false
	}
	for _, p := range v.tx.parties {
		if p.account == accountID && slices.Contains(p.hiddenFrom, v.reader) {
			return true
		}
	}
	return false
}

// seesEntry reports whether the reader sees a schedule entry: not when its payer is
// concealed from the reader, unless the reader is paid by it. Concealment covers a
// party's amounts (spec part 2, Party.visibility), so what a hidden seller pays a broker
// is not the buyer's to read.
func (v view) seesEntry(s *schedule) bool {
	return !v.hidden(s.payer) || s.beneficiary == v.reader
}

// amount is the transaction's total as the reader sees it: what listings filter on and
// reports show, so that neither reveals a concealed amount.
func (v view) amount() cents {
	var sum cents
	for _, it := range v.tx.items {
		if !v.seesItem(it) {
			continue
		}
		for _, s := range it.schedule {
			if v.seesEntry(s) {
				sum += s.amount
			}
		}
	}
	return sum
}

func (v view) seesItem(it *item) bool {
	if v.all {
		return true
	}
	if !transferable(it.typ) && !slices.ContainsFunc(it.schedule, v.seesEntry) {
		return false // a fee item made only of concealed amounts
	}
	switch rule := itemRule(it.typ); {
	case rule.visibility:
		return !slices.Contains(it.hiddenFrom, v.reader)
	case rule.partnerOnly:
		return v.tx.hasRole(v.reader, rolePartner) ||
			slices.ContainsFunc(it.schedule, func(s *schedule) bool { return s.payer == v.reader })
	}
	return true
}

func (v view) visibility(set bool, hiddenFrom []int64) *wireVisibility {
	if !set || !(v.all || v.tx.hasRole(v.reader, roleBroker) || v.tx.hasRole(v.reader, rolePartner)) {
		return nil
	}
	w := &wireVisibility{HiddenFrom: []string{}}
	for _, id := range hiddenFrom {
		w.HiddenFrom = append(w.HiddenFrom, v.customer(id))
	}
	return w
}

func (v view) transaction() wireTransaction {
	t := v.tx
	w := wireTransaction{
		ID: t.id, Currency: t.currency, Description: t.description, Reference: t.reference,
		CreationDate: formatTime(t.created), IsCancelled: t.cancelled,
		Parties: []wireParty{}, Items: []wireItem{},
	}
	if !t.closed.IsZero() {
		closed := formatTime(t.closed)
		w.CloseDate = &closed
	}
	for _, p := range t.parties {
		w.Parties = append(w.Parties, wireParty{
			ID: p.id, Role: p.role, Customer: v.customer(p.account), Agreed: p.agreed,
			Initiator: p.initiator, DisbursementMethodSelected: p.method != 0,
			Visibility: v.visibility(p.hiddenFrom != nil, p.hiddenFrom),
		})
	}
	for _, it := range t.items {
		if v.seesItem(it) {
			w.Items = append(w.Items, v.item(it))
		}
	}
	return w
}

func (v view) item(it *item) wireItem {
	w := wireItem{
		ID: it.id, Title: it.title, Description: it.description, Type: it.typ, Category: it.category,
		InspectionPeriod: it.inspectionPeriod, Quantity: it.quantity,
		Schedule: []wireSchedule{}, Fees: []wireFee{},
		ExtraAttributes: wireExtra{WithContent: it.extra.withContent},
		Status:          itemStatus(it.flags),
		Visibility:      v.visibility(it.hasVisibility, it.hiddenFrom),
	}
	if it.typ == itemMotorVehicle {
		x := it.extra
		w.ExtraAttributes.VIN, w.ExtraAttributes.Odometer, w.ExtraAttributes.Year = x.vin, x.odometer, x.year
		w.ExtraAttributes.Make, w.ExtraAttributes.Model = x.make, x.model
		w.ExtraAttributes.TitleCollection, w.ExtraAttributes.LienHolderPayoff = &x.titleCollection, &x.lienHolderPayoff
	}
	for _, s := range it.schedule {
		if !v.seesEntry(s) {
			continue
		}
		ws := wireSchedule{
			Amount: s.amount.String(), PayerCustomer: v.customer(s.payer), BeneficiaryCustomer: v.customer(s.beneficiary),
			Status: wireScheduleStatus{Secured: s.secured, DisbursedToBeneficiary: s.disbursed},
		}
		if !s.due.IsZero() {
			ws.DueDate = formatTime(s.due)
		}
		w.Schedule = append(w.Schedule, ws)
	}
	for _, f := range it.fees {
		if v.hidden(f.payer) {
			continue
		}
		wf := wireFee{Type: f.typ, PayerCustomer: v.customer(f.payer), Amount: f.amount.String(), AmountWithoutTaxes: f.amount.String()}
		if f.typ == feeEscrow {
			wf.Split = map[int]string{1: "0.5", 2: "1.0"}[f.halves]
		}
		w.Fees = append(w.Fees, wf)
	}
	return w
}

func itemStatus(f itemFlag) wireItemStatus {
	has := func(flag itemFlag) bool { return f&flag != 0 }
	return wireItemStatus{
		Shipped: has(flagShipped), Received: has(flagReceived), Accepted: has(flagAccepted),
		Rejected: has(flagRejected), ShippedReturned: has(flagShippedReturned),
		ReceivedReturned: has(flagReceivedReturned), AcceptedReturned: has(flagAcceptedReturned),
		RejectedReturned: has(flagRejectedReturned), Canceled: has(flagCanceled), InDispute: has(flagInDispute),
	}
}
