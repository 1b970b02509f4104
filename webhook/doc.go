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
// "accept:<id>", "reject:<id>", the four return steps and "payment_disbursed:<id>" (all its
// schedules paid out), then "complete" and "cancel". An event is handed over when the
// fetched transaction shows facts of that event which were not handed over before; the
// [Store] then records them. A repeated delivery finds nothing new and is dropped; a
// delivery whose transaction shows no fact of its event (forged, or claiming what has not
// happened) is dropped as unconfirmed. A delivery that arrives after earlier ones were
// lost hands those over first, from the transaction's state, so the callback sees each
// transaction's events in lifecycle order. Events the facts do not cover (payment_sent,
// payment_refunded, party_verification_*, names added later) are handed over once per
// transaction, event and resulting state; a lost one of those is not recovered, since the
// state does not show it.
//
// # No event lost
//
// [Handler.Reconcile] closes the gap left by deliveries that never came: it lists the
// account's ongoing transactions and those created since its previous run, ended or not
// (the partner listing for partners, the paged list otherwise), re-reads every transaction
// the store knows to be unfinished, and emits the events of facts not yet handed over,
// through the same per-transaction queue and callback. [Handler.RunReconciler] does so at
// once and then on a schedule; its first run marks where history ends, so transactions
// that ended before the handler started are not replayed. That mark lives in memory: after
// a restart, a transaction created and ended while the receiver was down, with none of its
// deliveries arriving, is found only through the store. Facts are recorded after the
// callback returns nil, so a crash in between can hand an event over twice, never zero
// times: the callback should be idempotent.
package webhook
