package escrowtest

// The money of a transaction. Only the buyer pays in: at funding, the schedule entries
// the buyer pays and the buyer's fee entries. What the seller owes (a seller-paid broker
// or partner fee, the seller's share of an escrow fee) is never paid in; it is taken out
// of the seller's proceeds. So:
//
//   - funding brings in what the buyer pays, and no more. A seller-paid entry shows as
//     secured from then on because the seller's proceeds held in escrow cover it (the SDK
//     and its users read "every entry secured" as funded), but it adds no money: held
//     counts what was paid in;
//   - an item is paid out when it is due and its beneficiary can be paid: its escrow fee
//     (both shares) is earned, the seller's share is deducted from the seller's payout,
//     and from the seller's payouts enough is withheld to cover the seller-paid fee items
//     still to pay, which are paid from what was withheld;
//   - a cancel, or a returned item, gives the buyer back what the buyer paid in for it, its
//     fee share included, and never what was not paid in; seller-paid entries lapse;
//   - at completion, what is still held (fee items of a fully returned deal, a withholding
//     no longer needed) goes back to whoever it came from.
//
// Every movement is counted in the ledger, and held is computed from the entries, so that
// in = out + fees + held checks one against the other (Ledger).
type ledger struct {
	in, out, fees cents
	withheld      cents // taken from the seller's payouts for seller-paid fee items
}

// Ledger is a transaction's money, as decimal strings with two decimals: what the buyer
// paid in, what went out (payouts and refunds), the escrow fees earned, and what is held
// in escrow. In always equals Out + Fees + Held.
type Ledger struct {
	In   string `json:"in"`
	Out  string `json:"out"`
	Fees string `json:"fees"`
	Held string `json:"held"`
}

// Ledger returns the money of a transaction, for tests that check that every path
// balances.
func (e *Emulator) Ledger(txID int64) (Ledger, error) {
	e.lock()
	defer e.mu.Unlock()
	tx := e.st.txs[txID]
	if tx == nil {
		return Ledger{}, notFound("no transaction %d", txID)
	}
	return Ledger{In: tx.money.in.String(), Out: tx.money.out.String(), Fees: tx.money.fees.String(), Held: held(tx).String()}, nil
}

// held is what the transaction's entries say is in escrow: the buyer's secured entries
// and fee entries not yet paid out, earned or refunded, and what is withheld from the
// seller.
func held(tx *transaction) cents {
	sum := tx.money.withheld
	for _, it := range tx.items {
		sum += it.held()
	}
	return sum
}

// held is what one item's entries hold in escrow: its secured entries and fee entries not
// yet paid out, earned or refunded.
func (it *item) held() cents {
	var sum cents
	for _, s := range it.schedule {
		if s.paidIn && !s.disbursed && !s.refunded {
			sum += s.amount
		}
	}
	for _, f := range it.fees {
		if f.paidIn && !f.settled {
			sum += f.amount
		}
	}
	return sum
}

// payIn is the buyer's payment arriving: the buyer's entries are secured.
func (e *Emulator) payIn(tx *transaction) cents {
	buyer := tx.party(roleBuyer).account
	var total cents
	for _, it := range tx.items {
		for _, s := range it.schedule {
			if s.payer == buyer {
				s.paidIn, total = true, total+s.amount
			}
			s.secured = true
		}
		for _, f := range it.fees {
			if f.payer == buyer {
				f.paidIn, total = true, total+f.amount
			}
		}
	}
	tx.money.in += total
	return total
}

// sellerOwes is what the seller still owes out of its proceeds: seller-paid entries not
// yet paid or lapsed.
func sellerOwes(tx *transaction) cents {
	seller := tx.party(roleSeller).account
	var sum cents
	for _, it := range tx.items {
		for _, s := range it.schedule {
			if s.payer == seller && !s.disbursed && !s.refunded {
				sum += s.amount
			}
		}
	}
	return sum
}

// payOut pays an item's entries to their beneficiary and earns its escrow fee. It
// reports whether anything was paid.
func (e *Emulator) payOut(tx *transaction, it *item) bool {
	seller := tx.party(roleSeller).account
	gross, beneficiary, paid := payableSchedule(tx, it, seller)
	if !paid {
		return false
	}
	payout := gross - settleFees(tx, it, seller, beneficiary)
	if beneficiary == seller {
		withhold := min(max(sellerOwes(tx)-tx.money.withheld, 0), payout)
		tx.money.withheld += withhold
		payout -= withhold
	}
	tx.money.out += payout
	return true
}

// payableSchedule marks disbursed the item's payments that can be paid out now, and
// returns what they amount to and to whom they go; paid is false when none can.
func payableSchedule(tx *transaction, it *item, seller int64) (gross cents, beneficiary int64, paid bool) {
	for _, s := range it.schedule {
		if s.disbursed || s.refunded {
			continue
		}
		switch {
		case s.paidIn:
			gross += s.amount
		case s.payer == seller:
			// Paid from what was withheld from the seller, never more: it waits while
			// seller payouts it could be withheld from are still to come.
			if tx.money.withheld < s.amount && sellerPayoutsPending(tx) {
				continue
			}
			take := min(s.amount, tx.money.withheld)
			tx.money.withheld -= take
			gross += take
		default:
			continue // never paid in
		}
		s.disbursed, beneficiary, paid = true, s.beneficiary, true
	}
	return gross, beneficiary, paid
}

// settleFees settles the item's fees with its payout, and returns the seller's, which
// come out of a payout to the seller.
func settleFees(tx *transaction, it *item, seller, beneficiary int64) (sellerFees cents) {
	for _, f := range it.fees {
		if f.settled {
			continue
		}
		switch {
		case f.paidIn:
			tx.money.fees += f.amount
		case f.payer == seller && beneficiary == seller:
			tx.money.fees += f.amount
			sellerFees += f.amount
		default:
			continue // a fee entry of someone else than the buyer or the seller paid: none
		}
		f.settled = true
	}
	return sellerFees
}

// refundItem gives the buyer back what the buyer paid in for an item, fee share
// included; seller-paid entries lapse. It returns the amount refunded.
func (e *Emulator) refundItem(tx *transaction, it *item) cents {
	back := it.refundSchedule() + it.refundFees()
	tx.money.out += back
	if back > 0 && tx.paymentMethod == "credit_card" {
		e.st.payments = append(e.st.payments, cardPayment{out: true, customer: tx.party(roleBuyer).account, tx: tx.id, amount: back, created: e.now})
	}
	return back
}

// refundSchedule marks the item's schedule entries not yet paid out refunded, and returns
// what of them was paid in.
func (it *item) refundSchedule() cents {
	var back cents
	for _, s := range it.schedule {
		if s.disbursed || s.refunded {
			continue
		}
		if s.paidIn {
			back += s.amount
		}
		s.refunded = true // a seller-paid entry lapses: it was never paid in
	}
	return back
}

// refundFees settles the item's fee entries not yet settled, and returns what of them was
// paid in.
func (it *item) refundFees() cents {
	var back cents
	for _, f := range it.fees {
		if f.settled {
			continue
		}
		if f.paidIn {
			back += f.amount
		}
		f.settled = true
	}
	return back
}

// release pays back, at completion or cancel, what is still held: refunds of the buyer's
// entries, and the withholding to the seller. It returns what went back to the buyer.
func (e *Emulator) release(tx *transaction) cents {
	var back cents
	for _, it := range tx.items {
		back += e.refundItem(tx, it)
	}
	tx.money.out += tx.money.withheld
	tx.money.withheld = 0
	return back
}

// sellerPayoutsPending reports whether secured money is still to be paid to the seller.
func sellerPayoutsPending(tx *transaction) bool {
	seller := tx.party(roleSeller).account
	for _, it := range tx.items {
		for _, s := range it.schedule {
			if s.beneficiary == seller && s.paidIn && !s.disbursed && !s.refunded {
				return true
			}
		}
	}
	return false
}
