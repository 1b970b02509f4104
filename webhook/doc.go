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
// # What can be confirmed
//
// Every transaction's state is read as a set of facts, from the SDK's own predicates
// (Transaction.AllAgreed, Funded, Completed, Cancelled, Item.Disbursed): "create", "agree",
// "payment_approved", per item "ship:<id>", "receive:<id>", "accept:<id>", "reject:<id>",
// the four return steps and "payment_disbursed:<id>", then "complete" (closed: an unpaid
// fee keeps a transaction open) and "cancel". Only those events become a ConfirmedEvent,
// and only when the fetched transaction shows the fact. An event no state can show
// (payment_sent, payment_refunded, party_verification_*, names added later or invented)
// never does; [Options].OnUnconfirmedHint may receive it as a [Hint], clearly
// unconfirmed, its name validated and never kept. Whether a transaction is finished comes
// from the fetched state only, never from a delivery.
//
// # Exactly once, and replicas
//
// An event is handed over when the fetched transaction shows facts of it that were not
// handed over before, preceded by earlier facts whose deliveries were lost (FromReconcile).
// Before the callback the handler claims the facts in its [Store]: atomically, for all
// the facts of the event or none, leased to this handler ([Options].Replica). Replicas
// sharing a store therefore never hand over the same fact; a claim whose owner died is
// taken over when its lease ends. The facts are recorded as done after the callback
// returns nil, so a crash in between hands the event over again: make the callback
// idempotent, or record the facts in the callback's own database transaction
// (package sqlstore, Store.TxCallback) for effectively-once.
//
// # Storms
//
// Deliveries for one transaction wait in one queue entry and coalesce into a single
// confirming fetch; one worker at a time confirms a transaction. After a fetch that found
// nothing new the next waits [Options].Refetch, four times longer each time up to
// MaxRefetch, so 10,000 replays cost a handful of calls. Confirmations read the API's
// rate-limit headers and leave the application [Options].Reserve of each window.
//
// # No event lost
//
// [Handler.Reconcile] closes the gap left by deliveries that never came: it lists the
// account's ongoing transactions and those created since its previous run, ended or not
// (the partner listing for partners, the paged list otherwise), re-reads every transaction
// the store knows to be unfinished, and emits the events of facts not yet handed over,
// through the same queue and callback. Where its previous run ended is kept in the Store,
// so with a durable store a transaction created and ended while no receiver ran is still
// found. [Handler.RunReconciler] reconciles at once and then on a schedule; the first run
// over an empty store marks where history ends, so that older transactions are not
// replayed.
//
// # Options
//
// A Handler is configured by the [Options] struct, not by functional options as the
// other packages are (see escrow.Option): a receiver's settings are one record that every
// replica shares and that is handed whole to NewHandler, and the zero value is usable.
// Every new knob is a field of Options, with its default in its comment.
package webhook
