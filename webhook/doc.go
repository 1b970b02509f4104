// Package webhook is the receiving side of the escrow API's webhooks, built for deliveries
// that are unsigned, time out after 10 s and are never retried (spec part 6).
//
// A [Handler] answers each delivery at once and does the work behind it: it confirms the
// event by fetching the transaction with the account's own client (a forged delivery, or
// one about a transaction the account cannot read, is dropped and logged), and hands the
// callback a [ConfirmedEvent] carrying the fresh transaction. Events of one transaction are
// handed over in order, one at a time; a failing callback is retried with backoff without
// holding up other transactions.
//
// # Exactly once
//
// Deliveries are de-duplicated by what they change, not by their bodies. Every
// transaction's state is read as a set of facts: "create", "agree" (all parties agreed),
// "payment_approved" (all schedules secured), per item "ship:<id>", "receive:<id>",
// "accept:<id>", "reject:<id>" and the four return steps, "complete" and "cancel". An event
// is handed over when the fetched transaction shows facts of that event which were not
// handed over before; the [Store] then records them. A repeated delivery finds nothing new
// and is dropped; a delivery whose transaction shows no fact of its event (forged, or
// claiming what has not happened) is dropped as unconfirmed. Events the facts do not cover
// (payment_sent, party_verification_*, names added later) are handed over once per
// transaction, event and resulting state.
//
// # No event lost
//
// [Handler.Reconcile] closes the gap left by deliveries that never came: it lists the
// account's ongoing transactions (the partner listing for partners, the paged list
// otherwise) and re-reads every transaction the store knows to be unfinished, and emits the
// events of facts not yet handed over, through the same per-transaction queue and
// callback. [Handler.RunReconciler] does so on a schedule. Facts are recorded after the
// callback returns nil, so a crash in between can hand an event over twice, never zero
// times: the callback should be idempotent.
package webhook
