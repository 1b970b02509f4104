package webhook

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	escrow "github.com/escrowkit/escrow-go"
)

// fact is one thing a transaction's state shows to have happened, and the event that
// announces it.
type fact struct {
	event  escrow.EventName
	key    string
	itemID int64 // 0 for facts of the whole transaction
}

// itemFacts are the per-item status flags in lifecycle order, with their events.
var itemFacts = []struct {
	event escrow.EventName
	set   func(escrow.ItemStatus) bool
}{
	{escrow.EventShip, func(s escrow.ItemStatus) bool { return s.Shipped }},
	{escrow.EventReceive, func(s escrow.ItemStatus) bool { return s.Received }},
	{escrow.EventAccept, func(s escrow.ItemStatus) bool { return s.Accepted }},
	{escrow.EventReject, func(s escrow.ItemStatus) bool { return s.Rejected }},
	{escrow.EventShipReturn, func(s escrow.ItemStatus) bool { return s.ShippedReturned }},
	{escrow.EventReceiveReturn, func(s escrow.ItemStatus) bool { return s.ReceivedReturned }},
	{escrow.EventAcceptReturn, func(s escrow.ItemStatus) bool { return s.AcceptedReturned }},
	{escrow.EventRejectReturn, func(s escrow.ItemStatus) bool { return s.RejectedReturned }},
}

// factsOf reads a transaction's state as facts, in the order their events happen.
func factsOf(tx *escrow.Transaction) []fact {
	out := []fact{{event: escrow.EventCreate, key: string(escrow.EventCreate)}}
	if allAgreed(tx) {
		out = append(out, fact{event: escrow.EventAgree, key: string(escrow.EventAgree)})
	}
	if funded(tx) {
		out = append(out, fact{event: escrow.EventPaymentApproved, key: string(escrow.EventPaymentApproved)})
	}
	for _, f := range itemFacts {
		for _, it := range tx.Items {
			if it.Type.Transferable() && f.set(it.Status) {
				out = append(out, fact{event: f.event, key: string(f.event) + ":" + strconv.FormatInt(it.ID, 10), itemID: it.ID})
			}
		}
	}
	for _, it := range tx.Items {
		if disbursed(it) {
			out = append(out, fact{event: escrow.EventPaymentDisbursed, key: string(escrow.EventPaymentDisbursed) + ":" + strconv.FormatInt(it.ID, 10), itemID: it.ID})
		}
	}
	if completed(tx) {
		out = append(out, fact{event: escrow.EventComplete, key: string(escrow.EventComplete)})
	}
	if tx.IsCancelled {
		out = append(out, fact{event: escrow.EventCancel, key: string(escrow.EventCancel)})
	}
	return out
}

// coveredByFacts reports whether an event is one the facts describe.
func coveredByFacts(ev escrow.EventName) bool {
	switch ev {
	case escrow.EventCreate, escrow.EventAgree, escrow.EventPaymentApproved, escrow.EventPaymentDisbursed,
		escrow.EventComplete, escrow.EventCancel:
		return true
	}
	for _, f := range itemFacts {
		if f.event == ev {
			return true
		}
	}
	return false
}

func allAgreed(tx *escrow.Transaction) bool {
	for _, p := range tx.Parties {
		if !p.Agreed {
			return false
		}
	}
	return len(tx.Parties) > 0
}

// funded is true once every schedule of every item is secured.
func funded(tx *escrow.Transaction) bool {
	n := 0
	for _, it := range tx.Items {
		for _, s := range it.Schedule {
			if !s.Status.Secured {
				return false
			}
			n++
		}
	}
	return n > 0
}

// disbursed is true once every schedule of an item has been paid out to its beneficiary.
func disbursed(it escrow.Item) bool {
	for _, s := range it.Schedule {
		if !s.Status.DisbursedToBeneficiary {
			return false
		}
	}
	return len(it.Schedule) > 0
}

// completed is true once every schedule of the transferable items has been paid out, or
// the transaction has closed without being cancelled.
func completed(tx *escrow.Transaction) bool {
	if tx.IsCancelled {
		return false
	}
	if !tx.CloseDate.IsZero() {
		return true
	}
	n := 0
	for _, it := range tx.Items {
		if !it.Type.Transferable() {
			continue
		}
		for _, s := range it.Schedule {
			if !s.Status.DisbursedToBeneficiary {
				return false
			}
			n++
		}
	}
	return n > 0
}

// terminal reports whether the facts end the transaction.
func terminal(facts []fact) bool {
	for _, f := range facts {
		if f.event == escrow.EventComplete || f.event == escrow.EventCancel {
			return true
		}
	}
	return false
}

// stateKey names an event not covered by facts together with the state it left, for
// de-duplication: "payment_sent@<sha256 of the transaction>".
func stateKey(ev escrow.EventName, tx *escrow.Transaction) string {
	b, _ := json.Marshal(tx) // a decoded Transaction always marshals
	sum := sha256.Sum256(b)
	return string(ev) + "@" + hex.EncodeToString(sum[:12])
}
