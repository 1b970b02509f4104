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
// # Proof of origin: a secret in the URL
//
// Deliveries carry no signature, so anyone who learns the URL can post to it. With
// [Options].Secrets the URL itself is the proof: register [Handler.DeliveryURL], which
// appends the current secret as the last path segment ("/escrow/webhook/SECRET"; mount the
// handler on "/escrow/webhook/"), and a delivery whose last path segment is none of the
// secrets is answered 404 before anything else: its body is not read, and no API call,
// store access or goroutine is spent on it. Secrets are compared as SHA-256 digests in
// constant time, every one of them; refusals are counted ([Handler.Stats]) and warned
// about at most once a minute, never with the URL. A path segment rather than a query
// parameter: it passes through the proxies and routers that drop or reorder queries.
// The URL is a credential: [MaskURL] shows a registered URL with SECRET in the secret's
// place, for logs and terminals.
//
// Rotation, for a URL that leaked or on a schedule: put a new secret first and keep the
// old one after it (Secrets: {new, old}), register the new DeliveryURL, remove the old
// registration, then, once no delivery can still be on its way to the old URL (seconds:
// the sender gives up after 10 s), drop the old secret. With several replicas, each must
// accept the new secret before it is registered; [SharedSecrets] keeps the list in a
// [Store] that implements [Settings], so that replicas and restarts share it.
//
// The secret proves only that the sender knows the URL, not that the event is true: a
// leaked URL lets its holder forge deliveries until the secret is rotated. So the handler
// still confirms every event by fetching the transaction, and a secret is what keeps that
// confirming cheap.
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
// An event is handed over when a fetched transaction first shows facts of it: a fetch
// hands over every fact its state shows that was not handed over before, in order. Facts
// of the delivered events come FromWebhook; the others FromReconcile: their deliveries
// were lost, or are on their way and will be replays. So one fetch serves a burst of a
// transaction's events, and the callback sees them as soon as a state shows them.
// Replicas sharing a [Store] take turns per transaction: one at a time holds the
// transaction's lease ([Store.Acquire], leased to [Options].Replica for ClaimLease),
// fetches it and hands its new facts over; a delivery that reaches another replica
// meanwhile costs no fetch: it is recorded for the holder, which confirms it when its turn
// ends ([Store.Yield]), from the state it fetched if that already shows it (for an event
// of the goods: for every good, since a delivery names no item), or with one more fetch.
// (Package sqlstore on PostgreSQL has it wait for a short turn's end instead, and then
// find it a replay of what the turn recorded, or take a turn of its own.)
// So fetches per fact do not grow with the replicas, and two replicas never
// hand over the same fact. The facts of a turn are recorded when it ends, with the pace
// and whether the transaction finished, in one database transaction; a crash before that
// hands the turn's events over again, and a holder that died is taken over when its lease
// ends. Make the callback idempotent, or record the facts in the callback's own database
// transaction (package sqlstore, Store.TxCallback) for effectively-once.
//
// # Storms
//
// Deliveries for one transaction wait in one queue entry and coalesce into a single
// confirming fetch; one worker at a time confirms a transaction. A delivery that can only
// be a replay of facts the Store records as handed over is dropped without a fetch, and
// without taking the lease ([Replayed], Turn.Replayed): an event that happens once per
// transaction (create, agree, payment_approved, complete, cancel) whose fact is recorded,
// or an item event recorded for every item it can concern (a transaction's items are
// fixed at its creation, and their counts are recorded with its first facts). A name no
// state can show is dropped as it arrives unless [Options].OnUnconfirmedHint is set. After
// a fetch that found nothing new, a delivery of a name already tried waits
// [Options].Refetch, four times longer each time up to MaxRefetch, so 10,000 deliveries
// of an item event the state does not show cost a handful of calls; the pace
// is kept in the Store, so replays spread over replicas are paced together, and a waiting
// replica gives its lease up meanwhile. A delivery of a confirmable name not tried yet
// (payment_approved after payment_received brought nothing) is fetched at once.
// Confirmations read the API's rate-limit headers and leave the application
// [Options].Reserve of each window.
//
// # Floods
//
// Without a secret (registrations of plain URLs keep working) a forger can name
// thousands of made-up transactions, each a confirming fetch. The handler keeps them
// from starving real events. At most [Options].Workers goroutines (and one that
// schedules waits) work, whatever is queued, taking transactions in this order: those the
// account is known to have (handed over before, found or tracked by the reconciler,
// listed, or found in the Store); then never-seen ids; then those the Store does not know
// either. While never-seen ids come no faster than they are taken (none waits, and the
// share below is not spent) a never-seen id is taken like a known one; otherwise (a
// burst of new transactions, a flood) it is first looked up in the Store, with its lease
// asked for only if the Store knows it (no API call, no write for a forged id). Those the
// Store does not know are confirmed, for a partner, by listings of its transactions that
// name them (GET /partner/transactions?ids=…, a page of 100 ids a call, on an endpoint of
// its own): a real new transaction is among the answer, with its state, and needs no
// fetch of its own. A listing asks about the ids nearest the account's newest transaction
// first (a real new one is just above it, however many made-up ids wait); one that named
// most of its ids is followed by the next a tenth of a second later, one that named few
// (made-up ids) by the next a second later. A state listed confirms only the deliveries
// that came before the listing asked. An account that is no partner lists its own
// transactions instead (GET /transaction, newest first, 100 a page, on an endpoint of its
// own): a round of pages walks down from the newest while they name ids waiting, so a
// burst of new transactions costs a page per hundred. Ids a listing did not name (a
// partner may be a party without being the partner; an id may be made up) are confirmed
// by a fetch of their own while the share of the window allows: fetches of never-seen ids answered 404 or 403 may spend at most
// [Options].UnseenShare (a tenth) of each rate-limit window of GET /transaction/{id}, so
// a flood spends that and waits for the next window while known transactions go on. An
// id answered 404 or 403 is not fetched again for a minute (a negative cache), and leaves
// nothing in the Store. Never-seen ids wait with their delivered names in a queue of
// their own, [Options].MaxUnseen (1,000) long; past it an id is owed a look without its
// name: such ids are kept as ranges in the Store ([Store.Owe]; ids are handed out in order,
// so a burst of 100,000 new transactions is one range), listed after the queued ones, and
// their facts handed over FromReconcile. Kept in the Store, they are continued by another
// replica, or by this process after a restart (at its first never-seen id). One listing at
// a time across the replicas sharing a Store asks about them: it holds a lease of the
// Store's for its one call; a replica refused it hands the ids waiting there to the Store,
// those queued without their names, so that replicas never list, then confirm, the same
// new transactions at once. No never-seen id is dropped but past
// 100,000 ranges (the farthest from the account's newest transaction first); no delivery
// of a transaction the account is known to have is dropped.
// No delivery is answered 503 but past MaxQueued known transactions waiting or after
// Shutdown. [Handler.Stats] counts what
// was dropped. BENCHMARKS.md, "A flood of forged transaction ids", has the figures with
// 16,000 forged ids.
//
// # Backlogs
//
// Replicas behind a load balancer that spreads deliveries evenly hold the same backlog
// after an outage or a burst: each has some of every transaction's deliveries. Taken
// oldest first by all of them, their workers would start on the same transactions at
// once, and all but one would wait for that one's turn and then find its facts recorded.
// So a handler takes what waits in blocks of 64 in an order of its own (random): the
// replicas mostly work on different transactions, and reach the others after their turns
// ended, as replays that one read of the Store drops. An id is taken before every one that
// came 64 or more places after it (never-seen ids the Store does not know either are
// taken oldest first); a handler that is not behind takes each delivery as it comes.
//
// # Bounded stores
//
// [Store.Prune] deletes what a store keeps about transactions finished before a time and
// leaves a tombstone of each: its id and when it finished, a row of a few dozen bytes. A
// late or replayed delivery for a pruned transaction finds the tombstone and is dropped
// without a fetch, so its events are never handed over again. [Handler.RunReconciler]
// prunes what finished more than [Options].Retention ago (default 30 days; negative
// keeps everything), a tenth of the retention apart and one replica at a time (they take
// a lease for it). Tombstones are deleted [TombstoneHorizon] (a year) after the facts:
// a delivery replayed (the API itself never sends one again) later than Retention +
// TombstoneHorizon after its transaction ended is confirmed like a new one, and its
// facts are handed over a second time.
//
// # How far one store goes
//
// A turn costs the PostgreSQL store of package sqlstore one commit (the lease is taken in
// a database transaction its end commits, with the effects of sqlstore's TxCallbacks; two
// if the turn outlasts 200 ms), and a turn hands over every fact its fetch shows, often
// several. A delivery that reaches a replica while another holds the turn waits for that
// turn's end and is then most often a replay: one read-only transaction, or nothing at a
// replica that already knows it is one. Measured (BENCHMARKS.md, section 8): under bursts
// 0.15 commits per fact at one replica and 0.2 at four; on an idle receiver, where a turn
// hands over one or two facts, 0.8 and 1.05.
// Rows are per fact and per transaction, and are pruned with the retention. Every write
// names one transaction id, so the load spreads over rows and only one transaction's
// deliveries ever wait for each other. What a PostgreSQL server spends per fact grows with
// how many transactions run at once (package sqlstore, "Connections": a store uses at most
// 4 connections), and each replica must read a transaction's record at least once: on a
// machine where the database's CPU is the limit, four replicas catch up slower than one
// (about 0.6 of its rate on the 2-core machine of section 8, the emulator answering on
// loopback). With the API 5 ms away or more, as the live API is, a replica's catch-up is
// bound by its turns under way instead, and four replicas catch up faster than one: 1.3
// times its rate at 5 ms, 2.3 at 20 ms, 2.9 at 100 ms. A marketplace with ten times the
// traffic has two ways on, both without changing this package: partition the three tables
// by transaction id (PostgreSQL hash partitioning: each statement names its transaction,
// so it touches one partition), or give each account, or each range of accounts, its own
// store (a Store per Handler; the reconciler's mark is per store). Replicas beyond what
// the database sustains add no throughput: measure with bench/receive.
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
// over an empty store marks where history ends (the newest transaction, noted before it
// walks the account, so that a process killed during that walk leaves the mark), so that
// older transactions are not replayed.
//
// # Options
//
// A Handler is configured by the [Options] struct, not by functional options as the
// other packages are (see escrow.Option): a receiver's settings are one record that every
// replica shares and that is handed whole to NewHandler, and the zero value is usable.
// Every new knob is a field of Options, with its default in its comment.
package webhook

// Reading the code. A delivery meets the parts of a Handler in this order, each a type in
// a file of its own:
//
//   - handler.go: the Handler, the public API and little else;
//   - door.go: the door refuses a delivery without a secret, parses it, and answers at
//     once what needs no work (names nobody receives, replays the recorded facts show);
//   - scheduler.go: the scheduler queues it per transaction, in the lane of what is known
//     of the transaction, and runs each queue's tries on its workers, with the waits as
//     wakeups; neverseen.go holds its part for never-seen ids: owed ids kept as ranges
//     (ranges.go), listed in pages or fetched within their share; owed.go keeps them in the
//     Store, listed one replica at a time; claims.go has a partner's claims listed too;
//   - confirmer.go: the confirmer takes the transaction's turn in the Store (store.go),
//     fetches it, compares its facts (facts.go) with those recorded, hands the new ones
//     over and records them;
//   - account.go: what the API said: the rate-limit window and the application's reserve,
//     the shares of what may be wasted (lanes.go: shareBudget), ids it refused, whether
//     the account is a partner;
//   - reconcile.go: the reconciler, which finds what no delivery announced.
