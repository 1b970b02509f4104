// Package escrowtest is a stateful local emulator of the escrow API (version 2017-09-01),
// for tests that follow an escrow through its whole lifecycle without the network.
//
// # What a test calls
//
//	srv := escrowtest.NewServer()            // HTTPS on 127.0.0.1; srv.URL is the base URL
//	defer srv.Close()
//	buyer := srv.AddCustomer("buyer@example.com") // credentials: buyer.Email, buyer.APIKey
//	market := srv.AddPartner("market@example.com") // an approved partner: As-Customer
//	client, err := escrow.NewClient(buyer.Email, buyer.APIKey, escrow.WithEmulator(srv))
//	...                                      // create, agree, ship, receive with the SDK
//	srv.ApprovePayment(id)                   // the buyer's funds arrive
//	srv.Advance(72 * time.Hour)              // inspection periods end: goods are accepted
//	p, err := srv.NextSteps(id)              // who must do what next, and why nothing was
//	                                         // paid out: t.Fatal(p) says it
//	l, err := srv.Ledger(id)                 // in = out + fees + held
//	srv.Deliveries()                         // the webhook calls made
//
// The methods live on Emulator, which Server embeds: AddCustomer, AddPartner,
// VerifyCustomer, ApprovePayment, RejectPayment, Advance, Now, NextSteps, Ledger,
// Deliveries, FlushWebhooks, InjectFault, ClearFaults, SetRateLimit and Reset. NewServer
// starts the emulator over HTTPS on a loopback address, as net/http/httptest does for a
// handler; NewEmulator returns it as an http.Handler to serve on a listener of one's own
// (the `escrow emulator` command does). A seller is paid out only once it has selected a
// disbursement method: NextSteps names that step when a payout waits on it. With WithUI,
// a browser on the same machine watches the emulator at srv.UIURL() (see Control API).
//
// The emulator is an independent implementation of the server side of the spec: it has
// its own JSON shapes and does not import the SDK, so that a wrong JSON tag on either
// side fails a test.
//
// # Departures from the spec, and their sources
//
// Where the spec and what production does part, the emulator does what the live API is
// known to do, and otherwise keeps the spec. Every departure, with its source:
//
//   - integers as numeric strings and extra_attributes booleans as "true"/"false":
//     accepted, though the spec types them integer and boolean. Source: production .NET,
//     PHP and plugin clients send them and create on the sandbox (API notes, "What real
//     clients send");
//   - a shipping_fee item without fee entries beside goods with them: accepted; fee rule 3
//     binds the goods. Source: the provider's e-commerce plugins (API notes);
//   - currencies gbp and cad: accepted (the spec's set "may be extended"). Source: five
//     public clients offer them (API notes);
//   - accept, accept_return and cancel: taken as actions, though the spec's action list
//     omits them. Source: the provider's docs and its event list (API notes, "Actions");
//   - reject_return As-Customer, which spec part 5 permits: refused (403), as are accept,
//     accept_return and cancel. Source: the live API refuses them for a partner (API notes,
//     "Actions"), so that what passes here does not fail in production;
//   - As-Customer from an account that is not an approved partner: 403 with the live
//     API's message, "Partner account not authorized to perform actions on behalf of
//     customers.", on every route, before anything else about the request is checked.
//     Source: two independent public clients recorded it in 2026, on PATCH
//     /transaction/{id} (agree) and on GET /transaction/{id}/web_link/agree (API notes,
//     "What the live API answered");
//   - GET /transaction/{id}/web_link/{action} (and its item form) takes As-Customer from
//     the transaction's approved partner, which the spec does not list among the delegated
//     calls. Source: the provider's agree guide, quoted by a public client, calls the web
//     link "most useful when performed on behalf of another customer";
//   - a minimum escrow fee, 25.00 by default (in the transaction's currency;
//     WithMinimumEscrowFee changes it), enforced at creation: a transaction whose buyer
//     pays less than its escrow fee, or than the minimum, is refused with 422 at
//     "items.all": "The amount paid by the buyer must be at least the amount of the escrow
//     fee: the buyer pays 15.00, the escrow fee is 25.00". The spec states no minimum. Source: the live API refused a
//     15.00 sale with that message in 2026. Why 25.00: the same client read a 50.00
//     minimum off the provider's fee calculator and puts the smallest sale at about
//     50.00, but the fees the live API charged contradict a 50.00 floor (32.50 on a
//     1000.00 sale, 17.88 on a 500.00 milestone), so the figure is not well attested;
//     25.00 refuses what was refused and still creates the 40.00 sales test suites make.
//     WithMinimumEscrowFee("50.00") takes the client's figure instead. The fee table is
//     not raised to the minimum: it keeps reproducing the fees observed (see Escrow fee);
//   - categories are checked per item type, with the live API's message ("This is not a
//     valid category for a general_merchandise item", at items.N.category): the spec's
//     list for general_merchandise less business_and_internet; the spec's whole list for
//     milestone and for domain_name with content; the spec's motor-vehicle list for
//     motor_vehicle; none on other types. Source: the live API refused
//     business_and_internet on a general_merchandise item in 2026 though the docs list
//     it (API notes); nothing recorded shows another category refused, so the other lists
//     stay the spec's;
//   - a creator who is neither buyer, seller nor broker, approved partner or not, is made
//     the partner party, as spec part 4 rule 1 says; spec part 1 rule 3 ("the customer
//     creating a transaction must be a party in it") is met by that partner entry. Only
//     As-Customer, partner fees and the partner endpoints need an approved partner. Source:
//     a public client's account, not an approved partner, created transactions live and in
//     the sandbox, and the parties received the provider's e-mails (API notes);
//   - PATCH /customer/{me|id} is served, though spec part 4 lists no such route. Source:
//     the provider's docs show it, with the spec's "Customer patch shape" as its body (API
//     notes);
//   - events payment_sent, payment_received, payment_refunded and payment_disbursed are
//     sent beside the spec's table, and answers carry fields the spec leaves out
//     (is_cancelled, is_draft, item category, fee amount_without_taxes, the customer's
//     display_name, shipping_address and verification objects). Source: the live API's
//     answers and the provider's plugins (API notes);
//   - POST /customer/{me|id}/api_key creates an API key: the emulator's own extension, with
//     no source, so that tests can make keys; the live API makes them in the account's
//     settings;
//   - a milestone or domain_name_holding schedule entry without due_date, which a public
//     client sends: refused (422), as the spec requires it;
//   - an upper-case currency ("USD"), an amount on a fee entry at creation, a split other
//     than 0.5 or 1, a "partner" entry in parties: refused, as the spec and the live API
//     do.
//
// # Measuring the emulator against the sandbox
//
// The list above is what is known; two commands measure the rest, with a sandbox account
// (API keys from the sandbox's account settings):
//
//	escrow conformance --against https://api.escrow-sandbox.com/2017-09-01/ \
//	    --env partner.env --buyer-env buyer.env --seller-env seller.env
//
// runs the built-in scenarios (a sale, a cancel, a rejection and return, a milestone
// contract, As-Customer, webhooks, validation errors and refused actions) through the SDK
// and prints a line per check and "N passed, M failed"; each .env file sets ESCROW_EMAIL
// and ESCROW_API_KEY for one account (the partner's should be an approved partner; the
// buyer's and seller's are the parties). The sandbox has no control API, so the steps
// after a payment (which a person makes there) are skipped. Against an emulator the
// suite makes its accounts itself: escrow conformance --against URL.
//
//	escrow record --upstream https://api.escrow-sandbox.com/2017-09-01/ --out cassettes
//
// prints a loopback address; point the SDK or the CLI at it (ESCROW_BASE_URL) and run a
// flow against the sandbox. Each exchange becomes a file in cassettes/ ([Cassette]):
// method, path, query, As-Customer, bodies, status, headers, timing, and the account by
// e-mail address only; keys, passwords, Authorization values and webhook delivery secrets
// never reach a file. Then
//
//	escrow conformance --cassettes cassettes --against URL-of-an-emulator
//
// (or [ReplayCassettes] in a Go test) replays them in order and prints each difference
// (status, fields missing or extra, flags) with the exchange that showed it; a file of
// those differences and the cassettes is what an issue about fidelity needs. A replay maps
// the ids the sandbox handed out to those the emulator hands out, and credentials by
// e-mail address: on an emulator each account is made through the control API when the
// recording first uses it (an approved partner when it sent As-Customer or called a
// partner endpoint); against a server without one, --env, --buyer-env and --seller-env
// (ReplayCredentials) give each account's key.
//
// # Where the spec says "not shown"
//
// Everything below is the emulator's choice, made where the spec and the API notes are
// silent. Clients must not rely on it against the live API.
//
// Routing. Every route of spec part 4 is served below /2017-09-01/, customer paths in their
// "me" and {customer_id} forms, plus PATCH /customer/{me|id} (see Customers). GET
// /customer (no id) answers 405, unknown routes 404 and
// known routes with another method 405 (with Allow), all with the error body below.
// POST /customer/{me|id}/api_key {"name"} is an extension that creates an API key; its
// answer is the only one that holds the full key.
//
// Status codes. 201 only for transaction creation, 204 for webhook deletion, 200 for every
// other success, including POST /customer and POST .../webhook. A body that is not JSON,
// holds several values or is not an object: 400. A body that fails validation: 422 with
// the spec's shape (see below). An action the current state does not allow: 400 with the
// error body naming the action and the state (its phase); nothing changes. No
// credentials, or wrong ones: 401 with WWW-Authenticate, saying which: credentials
// required, or refused (the emulator forgets its accounts and keys on Reset, and on a
// restart unless its state is kept in a file). What the caller may not do: 403. What does not exist
// or is not visible to the caller (only parties read a transaction): 404. A body over
// 1 MiB: 413. The emulator never answers 5xx on its own.
//
// Error body. Every error but validation errors is
//
//	{"error": "<code>", "message": "<text>"}
//
// with code one of bad_request, unauthorized, forbidden, not_found, method_not_allowed,
// invalid_state, payment_method_unavailable, too_large, rate_limited, injected_fault,
// misdirected_request (and timeout, from the control API's flush, and invalid_snapshot,
// from PUT /_emulator/state). An
// invalid_state body also has "action" (the refused action, or approve_payment,
// reject_payment, choose_payment_method, wire_transfer, select_disbursement_method),
// "state" and, when an item refused, "item_id".
//
// Validation body. {"errors": {...}}: objects keyed by field name or by index written as
// a string, lists of messages at the leaves, every failing field reported at once, e.g.
// {"errors": {"items": {"0": {"schedule": {"1": {"amount": ["..."]}}}}}}. Parties are
// reported as the spec shows, a list of messages per index naming the field
// ("parties": {"1": ["customer: ..."]}). Messages about a whole list sit under the key
// "all": "parties.all" (a missing buyer or seller), "items.all" (no transferable
// item, a buyer paying less than the escrow fee), "items.N.fees.all" (splits that do not sum to 1.0,
// a fee schedule that differs between items) and "items.N.schedule.all" (several
// entries on an item type that takes one, more than 100, a total too large). A reference
// to a party whose own entry failed is not reported again. Query parameters are reported
// by name ("per_page", "min_amount", …).
//
// Creation rules. Beyond spec parts 1, 2 and 7 and the API notes: description is required
// and not empty; an item needs type and schedule; title, description, category and quantity
// are optional (quantity from 1 to 1,000,000, 1 by default); inspection_period is whole days
// in seconds, from 86400 to 365 days, 259200 (3 days) by default on transferable items; one
// transferable item type per transaction (domain_name and domain_name_holding do not mix
// either) and at least one transferable item; categories by item type as listed above
// (domain_name only with extra_attributes.with_content); motor-vehicle attributes only on
// motor_vehicle items, with_content only on domain_name; goods and shipping fees are paid by
// the buyer to the seller, broker fees by the buyer or the seller to the broker, partner fees
// (approved partners only) by the buyer or the seller to the partner; fee entries are not
// allowed on broker_fee and partner_fee items, and a fee entry's amount is refused at
// creation; an escrow entry without split counts as 1; at most 100 items and 100 schedule
// entries, amounts up to 1000000000.00 and an item's schedule totalling no more. Amounts are
// JSON numbers or numeric strings, positive, with at most two decimals (1000.000 is accepted,
// 0.30000000000000004 is not). Integer fields (quantity, inspection_period, year, ids in
// bodies) take numeric strings ("259200") and extra_attributes booleans "true" and "false",
// as production clients send them and the live API accepts. Currency is one of usd, aud,
// euro, gbp, cad, lowercase. A reference is unique per creator. E-mail addresses are compared
// without case and returned lowercase. Unknown fields are ignored.
//
// Escrow fee. Each item but broker_fee and partner_fee items pays an escrow fee on its
// own amount (the sum of its schedule; quantity does not multiply it), a flat rate by
// tier:
//
//	amount up to        rate
//	      5,000.00      3.25 %
//	     50,000.00      1.60 %
//	  1,000,000.00      0.89 %
//	  above             0.60 %
//
// never less than the fee at the top of the tier below (so a larger amount never costs
// less), rounded half up to the cent. Milestone items add 10 % to the rate. This
// reproduces the fees seen on the live API: 1000.00 domain_name → 32.50; 95000.00
// general_merchandise → 845.50; 500.00 milestone → 17.88. Without fee entries the buyer
// pays it all; with entries it is shared by split, the first payer taking an odd cent.
// Fee rule 3 (the same fee schedule on every item) binds the transferable items; a
// shipping_fee item without entries, as the provider's e-commerce plugins send it, pays
// its escrow fee by the goods' entries.
// Other fee types (paypal_deposit, …) are accepted and shown with amount 0.00.
//
// Rendering. Amounts are strings with two decimals; payment and disbursement totals are
// JSON numbers with two decimals (210.00); split is a string ("0.5", "1.0") on escrow fee
// entries; amount_without_taxes equals amount (no tax is modelled). Timestamps look like
// the live API's: "2024-05-01T12:00:00.000000+00:00". The fields the spec says appear in
// partner listings (party id and disbursement_method_selected, close_date, schedule
// disbursed_to_beneficiary, fee split and amount_without_taxes, item canceled and
// in_dispute) appear in every rendering of a transaction. Transactions also carry
// is_cancelled (true once cancelled) and is_draft (always false); reference is left out
// when empty; close_date is null while open. The creator is listed last, as {"role":
// "partner"}.
//
// What each reader sees. Customers are shown by e-mail address, the reader too ("me" is
// only an input), as the provider's example responses show. A party whose
// visibility.hidden_from lists the reader is rendered "hidden" wherever its address would
// appear, and its amounts are left out of every view the reader has (transaction answers,
// lists, by reference, partner listings and their amount filters, reports, payments in
// and out): the fee entries it pays, and the schedule entries it pays unless to the
// reader, a fee item left with none being left out whole. That is how a broker conceals
// a commission the seller pays from the buyer: by hiding the seller from the buyer.
// broker_fee visibility hides the item itself from the readers it lists, and may not
// list the item's payer (422), who could not otherwise account for the money taken.
// partner_fee items are shown only to the partner and to their payers; visibility objects
// are shown only to the broker and the partner. Timeline entries name actors the same
// way; webhooks and the timeline carry no amounts.
//
// States. Where a transaction or a good stands is named with escrow.TransactionState's
// words, derived as the SDK derives them (states.go): awaiting_agreement,
// awaiting_payment, funded, shipped, in_inspection, accepted, returning, returned,
// in_dispute, disbursed, complete, cancelled. NextSteps, the control API, its ?state=
// filter and the page use them. The API's coarser words are the phase: the error body's
// "state" is an item's latest flag (shipped, received, accepted, rejected,
// shipped_returned, received_returned, accepted_returned, rejected_returned, in_dispute,
// canceled) or "awaiting_shipment", and a transaction's one of awaiting_agreement,
// awaiting_payment, funded, complete, cancelled (Progress.Phase, GoodState.Phase).
// An item's flags follow this table:
//
//	action          by      As-Customer  needs              sets                                            blocks
//	agree           party   yes          not closed         (the party agreed)                              -
//	cancel          party   no           see Cancel         (every item canceled)                           -
//	ship            seller  yes          funded             shipped                                         -
//	receive         buyer   yes          shipped            received (starts the inspection period)         -
//	accept          buyer   no           received           accepted                                        -
//	reject          buyer   yes          received           rejected                                        -
//	ship_return     buyer   yes          rejected           shipped_returned                                -
//	receive_return  seller  yes          shipped_returned   received_returned (starts a return inspection)  -
//	accept_return   seller  no           received_returned  accepted_returned (funds back to the buyer)     -
//	reject_return   seller  no           received_returned  rejected_returned, in_dispute                   -
//
// This is the table lifecycle in lifecycle.go, from which every list of actions is
// derived; the table above is rendered from it (go test -run TestDocTableIsTheLifecycle
// -update). An action's blocks stop those actions on the items it was taken on, the
// automatic acceptance too when it blocks accept.
// An action on the transaction applies to every transferable item, all of which must
// allow it; milestone transactions refuse it and take it per item, through
// /transaction/{id}/item/{item_id}, which works for any transferable item. agree and
// cancel apply to the whole transaction only (on the item path: 422 on "action").
// ship and ship_return of domain items need shipping_information.authorization_type
// (422 otherwise). When an inspection period ends, the item is accepted; when a return
// inspection period ends, the return is accepted; both fire their events with no
// customer. Time passes only through Advance when the clock is frozen (WithClock), and
// otherwise also with the wall clock; the emulator applies it before every request, so
// it needs no timer.
//
// Agreement and payment. Every party must agree; the creator's entries start agreed, and
// the agree event fires when the last party agrees; agreeing twice is refused. Payment
// steps (listing and choosing payment methods, wire details, marking a wire sent) are the
// buyer's; choosing a method or marking a wire sent needs every party agreed and no
// funding yet. Wire transfer is always offered; credit_card up to 10,000.00 (above it as
// conditionally available, "verification_required", until VerifyCustomer); paypal in usd
// and euro up to 10,000.00; poli in aud. Totals are the buyer's schedule entries plus the
// buyer's fee entries; credit_card and paypal add a 3 % payment fee, which
// total_without_payment_fee leaves out. Choosing credit_card, paypal or poli answers
// {"landing_page": "https://<emulator host>/_emulator/pages/checkout/<id>/<method>"}
// (with ?return_url=… when given). POST .../payment_methods/wire_transfer marks a wire
// sent (event payment_sent) and answers the updated transaction. ApprovePayment brings in
// what the buyer pays (see Money; events payment_received, then payment_approved);
// RejectPayment fires payment_rejected and clears the chosen method.
//
// Disbursement. GET, PATCH and POST /transaction/{id}/disbursement_methods are the seller's
// and the broker's; PATCH and POST behave alike: {"id": n} selects a saved method, full
// details add one to the caller's saved methods and select it. Customers whose address
// is in the USA, or who have no address, may use ach and wire_transfer ("wire" is read
// as wire_transfer); others wire_transfer_international. ach needs account_name,
// account_type, bank_aba_routing_number, bank_account_number and bank_name; wire types
// need account_name, bank_name, bank_swift_code and one of bank_account_number, bank_iban
// or international_routing_code. Totals are what the caller receives less the fees it
// pays. Accepted goods are disbursed once their beneficiary has selected a method (at once
// if one is selected already; fee items once every good is settled), with the event
// payment_disbursed; partner fees need no method. Changing the method fails once funds
// went to the caller or the transaction is cancelled. The transaction completes (event
// complete, close_date set) when every good is accepted or returned and every due entry
// is disbursed; a fully returned transaction completes too, its money back with the
// buyer.
//
// Money. Only the buyer pays in: its schedule entries and fee entries, at funding. What
// the seller owes (a commission it pays, its share of the escrow fee) is taken out of its
// proceeds: the seller's share of an item's fee when the item is paid out, and enough
// withheld from its payouts to pay its commission when that falls due. A seller-paid
// entry shows secured once funded, as covered by the seller's proceeds in escrow, but
// adds no money. The escrow fee is earned on goods paid out; a returned item, or a
// cancel, gives the buyer back what the buyer paid in for it, fee share included, and
// never what was not paid in. Ledger reports in, out, fees and held, and in = out + fees
// + held on every path.
//
// Cancel. Before the buyer and the seller have both agreed, any party may cancel; after,
// only the partner (403 for others). A complete or cancelled transaction cannot be
// cancelled, and, the emulator's choice, neither can one whose goods have shipped (400).
// Cancelling after funding returns what the buyer paid in (event payment_refunded after
// cancel).
// cancel_information.cancellation_reason is recorded in the timeline.
//
// As-Customer. Only an approved partner that is the transaction's partner party may send
// it, naming another party of that transaction (403 otherwise, with the live API's
// message when the caller is not an approved partner at all, and 403 on every route that
// does not take it). The matrix (AsCustomerActions, pinned by TestAsCustomerMatrix):
// agree, ship, receive, reject, ship_return and receive_return are taken; accept,
// accept_return, reject_return and cancel answer 403. Spec part 5 lists reject_return
// and the live API refuses it, as it refuses accept and accept_return: the emulator
// refuses it, so that a test passing here does not fail in production. Neither source
// permits cancel; the partner cancels as itself. GET .../payment_methods, POST
// .../payment_methods/{name} and POST .../payment_methods/wire_transfer take it too,
// acting for the buyer, and so do the web links. Answers are rendered for the partner.
//
// Customers. GET /customer/{id} answers the caller in full (with webhooks and saved
// disbursement methods). An approved partner sees a customer's profile (names, phone,
// addresses, company) only through its own relationship with that customer: it created the
// account (POST /customer, or by naming a new address in one of its transactions), or the
// customer itself, not the partner As-Customer, agreed to one of its transactions. Other
// parties of its transactions it sees without a profile (id, e-mail, username,
// verification), in GET /customer/{id} and GET /partner/customer alike; they are not in GET
// /partner/customers nor its statistics. Anyone else's: 403; unknown ids 404. So naming a
// customer in a throwaway transaction reveals nothing. Every customer answer carries
// address, shipping_address, company{address, company_name},
// electronic_verification{available: false, documents_supported: []},
// customer_email_verification{verified: whether the account has credentials yet} and
// verification{personal, company, extended ("not_required")}, empty when unknown, as the
// live API does. PATCH /customer/{me|id} takes the spec's Customer patch shape (first_name,
// middle_name, last_name, phone_number, address, shipping_address, company,
// identification_documents, and date_of_birth and tax_numbers, which the SDK sends; given
// fields replace stored ones) and answers the customer. Spec part 4, customer rule 3 (once
// an account exists, integrations can no longer supply its information) decides who: the
// customer itself only, never another caller, not even the partner that created the account
// (403 forbidden); email and id cannot change (422). The settings endpoints (API keys,
// webhooks, disbursement methods, identification documents) are the caller's own only.
// username is the part of the e-mail address before "@"; display_name is the first and last
// names, or the username. POST /customer creates an account without credentials
// (AddCustomer gives it some later) and answers the customer; identification-documents
// answers {"identification_documents": [...]} as given to POST /customer. API keys look
// like "<key id>_<26 alphanumeric characters>" and are kept as SHA-256 hashes, passwords
// likewise; listings show last_four_characters only; at most 100 per account (POST
// .../api_key answers 422 past it; AddCustomer and the control API retire the oldest).
// Webhooks: at most 20 per customer, absolute http or https URLs.
//
// Listings. GET /transaction lists the transactions the caller is a party to: page (from
// 1), per_page (1 to 100, default 10), sort_by=id, sort_direction asc|desc (default desc);
// page_count is 0 when there is none. GET /transaction/reference/{ref} finds, among the
// caller's transactions, the one the caller created with that reference, else the newest
// of the caller's transactions with that reference.
// Partner listings are for approved partners (403 otherwise). GET /partner/transactions
// lists the transactions the partner created, GET /partner/customers the parties of those
// and the customers it created with POST /customer. Lists are repeated parameters
// (ids=1&ids=2) or comma-separated (ids=1,2). Without limit (1 to 1000) a listing returns
// everything and "limit" is null. The cursor is an id: a page starts at the record whose
// id is next_cursor (or the first after it in the sort order), and next_cursor is the id
// of the first record of the next page, null on the last. min_amount and max_amount
// compare with the sum of every schedule entry of every item; initiation_start_date and
// initiation_end_date are inclusive; status=ongoing is neither complete nor cancelled,
// status=completed is complete. verification_status: verified and not_verified are about
// the person, company_verified about the company; country compares the address's
// country code. GET /partner/customer takes party_id or customer_id as query parameters.
//
// Statistics. GET /partner/statistics/transactions/count (by creation date) and
// /customers/count (by account creation) take start_date and end_date (ISO 8601,
// inclusive; by default the 30 days up to now) and interval (day, week or month; default
// day), at most 1000 intervals. They answer
//
//	{"queries": {"start_date": "…", "end_date": "…", "interval": "day"},
//	 "time_data": [{"value": 2, "label": "2024-05-01/2024-05-02"}, …],
//	 "aggregates": {"total": 2}}
//
// with buckets from midnight UTC of start_date, each labelled with its first day and the
// day after its last.
//
// Payments in and out. GET /partner/customer/{id}/payments_in lists the card payments of
// one of the partner's customers into the partner's transactions (recorded when a
// transaction whose chosen method is credit_card is funded), payments_out the refunds to
// cards:
//
//	{"payments": [{"last_four": "1001", "expiration_month": 12, "expiration_year": 2027,
//	  "brand": "visa", "customer_id": 1001, "transaction_id": 200001, "amount": "1032.50",
//	  "date": "…"}]}
//
// Reports. POST /partner/reports takes the query of GET /partner/transactions as a JSON
// body (lists as arrays) and answers that listing's first page with "task_id"
// ("report_" and 26 random characters, so that none can be guessed); the report, a CSV of
// every matching transaction, is complete at once.
// GET /partner/reports answers {"reports": [{"task_id", "status": "completed",
// "created_at", "completed_at"}]}, GET /partner/reports/count {"count": n}, and
// GET /partner/reports/{task_id}/download either {"url": "…"} (as_json=true) or a 302 to
// that address, https://<emulator host>/_emulator/reports/<task_id>.csv, which answers
// the partner's own Basic credentials only (401 without, 404 for anyone else).
//
// Timeline. GET /transaction/{id}/timeline-entries answers
//
//	{"timeline_entries": [{"id": 1, "event": "create", "event_type": "transaction",
//	  "date": "…", "item_id": 300001, "customer": "me", "message": "…"}]}
//
// with one entry per event, in order; item_id is left out for events on the whole
// transaction and customer for events the emulator caused (funding, auto-acceptance).
// Web links (GET .../web_link/{action}, action one of view, pay or an action name) answer
// a landing page on the emulator's host; an action's page is refused (400, in the live
// API's words: "Buyer is unable to agree at this stage in the transaction") to a caller
// none of whose roles takes the action, such as the creator that is only the partner
// party.
//
// Webhooks. Events are those of spec part 6 plus payment_sent (wire marked sent),
// payment_received (funds arrived, just before payment_approved), payment_refunded and
// payment_disbursed from the API notes. Each is POSTed as {"event", "event_type":
// "transaction", "transaction_id"} to every webhook of every party's account (once per
// account), with a 10-second timeout (WithWebhookTimeout) and no retry. Each receiver
// (webhook URL) has its own queue of at most 1000 calls, delivered one at a time in the
// order events happened, so a slow receiver delays only its own calls; a call that finds
// its receiver's queue full is lost and recorded with the error "queue full". Webhooks
// are looked up when the event happens. Every call is recorded (Deliveries, in the order
// the events happened; the latest 10,000).
//
// Rate limits. Each account may make 1000 requests per minute (WithRateLimit, SetRateLimit)
// to each endpoint, named by method and route template ("GET /transaction/{id}"); requests
// without valid credentials count under one anonymous account, and requests that match no
// route under their method ("GET *"), or under "OTHER *" for a method outside RFC 9110, so
// that no input opens windows without bound; ended windows are forgotten once 4096 are
// kept. Windows are fixed, start with their first request and run on the emulator's clock.
// Every API answer carries RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset
// (seconds until the window resets) unless limiting is off (a limit of 0); past the limit,
// 429 with Retry-After.
//
// Faults. InjectFault makes an endpoint (a route template, "POST *" or "*") answer a
// status, drop the connection before handling the request (nothing changes) or after it
// (the change is made, the client gets no answer), and/or wait, before handling the request
// (Latency: a client that gives up in the meantime changes nothing) or after it
// (LatencyAfter: the change is made however long the client waits), with a probability
// drawn from a generator seeded by WithSeed (1 by default). An injected status is answered
// like a failing proxy would, before routes and credentials are checked (with the
// rate-limit headers, and counted); the first injected fault that matches and fires
// applies. A fault whose endpoint matches no route ("GET /nope", "FETCH *") or no event
// ("WEBHOOK /shipped") is refused, in Go and in the control API (422), since it would never
// fire; at most 1000 faults stand at once. "WEBHOOK *" (or "WEBHOOK /<event>") faults the
// emulator's own webhook calls instead: a drop loses the call, as a network would
// (Deliveries records it), and a latency delays it and the calls queued behind it for the
// same receiver. "*" does not reach webhook calls.
//
// Control API. Beside the API, on the same listener, JSON without authentication for
// loopback clients only, neither rate-limited nor faulted:
//
//	GET    /_emulator/                                  200 {"endpoints": [...]}, this list
//	POST   /_emulator/customers {"email", "partner"}    201 {"id", "email", "api_key", "password"}
//	GET    /_emulator/transactions ?state= &party= &limit=
//	                                                    200 {"now", "total", "transactions": [{"id",
//	       "description", "amount", "state", "phase", "parties", "next_steps", "waiting", …}], "states"}
//	GET    /_emulator/transactions/{id} ?viewer=        200 {"now", "viewer", "parties", "transaction",
//	       "progress", "ledger", "timeline", "deliveries", "as_customer"}
//	POST   /_emulator/transactions/{id}/approve_payment 200 {"ok": true}
//	POST   /_emulator/transactions/{id}/reject_payment  200 {"ok": true}
//	POST   /_emulator/transactions/{id}/reach {"state"} 200 {the next_steps answer} (Reach)
//	POST   /_emulator/transactions/{id}/trigger {"event"}
//	                                                    200 {"ok": true} (Trigger)
//	GET    /_emulator/transactions/{id}/ledger          200 {"in", "out", "fees", "held"}
//	GET    /_emulator/transactions/{id}/next_steps      200 {"transaction_id", "state", "phase",
//	       "next_steps", "goods", "disbursed", "unpaid", "waiting"} (NextSteps)
//	POST   /_emulator/clock/advance {"seconds"}         200 {"now": "…", "transactions": [the
//	       next_steps answer of each transaction the move changed]}
//	POST   /_emulator/rate_limit {"limit", "window_seconds"} 200 {"ok": true}
//	POST   /_emulator/faults {"endpoint", "status", "probability", "drop", "latency_ms",
//	       "latency_after_ms"}                          200
//	GET    /_emulator/faults                            200 {"faults": [{"id", "endpoint", …}]}
//	DELETE /_emulator/faults/{id}                       200 (RemoveFault)
//	DELETE /_emulator/faults                            200
//	GET    /_emulator/accounts ?limit=                  200 {"total", "accounts": [{"id", "email",
//	       "partner", "created", "password", "api_keys": [{"id", "name", "last_four",
//	       "active"}], "webhooks": [{"id", "url"}]}]}
//	GET    /_emulator/webhook_deliveries ?flush=true    200 {"deliveries": [{"url", "event",
//	       "event_type", "transaction_id", "status_code", "error", "latency_ms", "fault"}]}
//	GET    /_emulator/requests ?account= &path= &status= &after= &limit=
//	                                                    200 {"requests": [{"seq", "time", "method",
//	       "path", "endpoint", "account", "as_customer", "status", "latency_ms", "fault",
//	       "request_body", "response_body"}]}
//	GET    /_emulator/state                             200 {"version", "clock", …} (Snapshot)
//	PUT    /_emulator/state {the document}              200 {"ok": true} (Restore)
//	POST   /_emulator/reset                             200
//	GET    /_emulator/events                            200 text/event-stream
//	GET    /_emulator/ui/                               200 text/html (WithUI)
//
// with the same error bodies as the API. GET /_emulator/transactions lists every
// transaction, newest first (the newest 200 unless limit says otherwise), filtered by
// state and by part of a party's address; GET /_emulator/transactions/{id} shows one as
// the API shows it to the party whose address viewer names (concealment applied; the
// emulator's view, which conceals nothing, without it), with its NextSteps, its ledger and
// whether it balances, its timeline, the webhook calls it caused (with latency_ms and the
// fault that touched each) and the latest 100 As-Customer calls made on it, refused ones
// included.
//
// The workbench. GET and PUT /_emulator/state are Snapshot and Restore: the whole state as
// one versioned document (`escrow emulator --state FILE` keeps it across restarts); a
// document PUT refuses (another version, a broken part) is a 422 naming the part, and
// changes nothing. The document holds key hashes and webhook URLs whole: it is as secret
// as the keys. POST .../reach is Reach: it drives a transaction forward to a state named by
// the SDK's TransactionState values as its parties would, each step with its events, and
// refuses (400, invalid_state) a state behind or off the transaction's way. POST
// .../trigger is Trigger: an event the transaction had, delivered again to its parties'
// webhooks (the calls are marked "replay"). GET /_emulator/requests is the request log
// (Requests): the latest 1000 API requests, faulted and refused ones included, with their
// bodies (16 KiB each) with every credential removed. GET /_emulator/faults lists the
// faults standing with the id DELETE /_emulator/faults/{id} removes; GET
// /_emulator/accounts the accounts with their keys by their last four characters and
// their webhooks masked.
//
// Every request to the emulator, API and control API alike, must be addressed (in its Host
// header) to a loopback name or address, or to a host given to WithHosts: any other is
// answered 421 Misdirected Request (error misdirected_request) before any route, so that a
// page of another site whose name points at 127.0.0.1 cannot reach the emulator through a
// browser.
//
// GET /_emulator/events is a stream of server-sent events: a "change" event whose data is
// a counter, at the start and whenever an API request was served, a control endpoint
// changed something or a webhook call ended (bursts coalesced, at most one every 150 ms).
// It carries nothing else: a watcher reads again what it shows. A stream ends after a
// second without a change, with "retry: 1000" so that the browser opens the next one, and
// no request stays open long. WithUI serves a page at /_emulator/ui/ (`escrow emulator`
// always does, and prints its address) that shows the transactions, who must act next,
// ledgers, webhook calls and As-Customer calls, updated from that stream, with controls
// that call the endpoints above. /_emulator/ui/?tx=ID&viewer=ADDRESS shows one
// transaction; without ?tx= the page follows the newest. The page arrives with its data. It is plain HTML, CSS
// and JavaScript embedded in the package, with no build step and nothing fetched from
// elsewhere. Requests that change something (any method but GET and HEAD) are refused
// (403) when a browser says they come from another site (Sec-Fetch-Site, or an Origin
// that is not the emulator's own), so that no other page open in the same browser can
// drive the emulator; programs that send neither header are not affected. POST /_emulator/customers creates at most 100,000
// accounts (422 past it), since it takes no credentials. It also serves the landing pages
// and report downloads the API hands out. [ControlClient] calls it from Go, typed with the
// same types (the escrow CLI's control commands use it); a test in the emulator's own
// process calls the Server's methods instead.
package escrowtest
