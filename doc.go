package escrow

// A note for whoever extends the SDK (the package documentation is in escrow.go). Routes
// and actions are facts written once, in two tables, and everything else derives from
// them (DESIGN.md, "Facts live in one place"). The escrowtest emulator keeps its own
// tables, independent on purpose: the contract tests (contract_test.go) compare them.
//
// Adding an endpoint:
//  1. endpoints.go: a named row (routeXxx) with its method, template and columns (answer
//     cap, settle kind, As-Customer), listed in routeTable;
//  2. the method on its service, naming the row: call{route: routeXxx, ...};
//  3. escrowtest: its route and handler, unless the emulator serves it already;
//  4. contract_test.go: the SDK type its answer decodes into (answerTypes) and a step of
//     TestEmulatorAnswersDecodeStrictly that calls it;
//  5. go generate: the service's doc table and the README's endpoint table.
//
// An endpoint only the emulator serves stays out of routeTable and goes in
// emulatorExtensions (contract_test.go).
//
// Adding an action, a delegable "dispute" that emits an event, say (buyer or seller, after
// receive, optional). These are the 8 places (6 files) such a change took when tried,
// every test then passing:
//  1. escrow.go: its Action constant (ActionDispute);
//  2. escrow.go: its EventName constant (EventDispute), unless the event exists;
//  3. actions.go: its row: roles, event, the item flag it sets (as ItemStatus names it in
//     JSON; a new flag also needs its ItemStatus field and its entry in itemFlags), the
//     state that flag leads to, the flag it follows (after), optional when the lifecycle
//     does not wait on it, delegable, what its body takes. Settling an ambiguous action,
//     the webhook facts, Item.State, NextSteps, the CLI's list and flags and the
//     As-Customer docs read the row;
//  4. escrowtest/lifecycle.go: the emulator's row: roles, delegable, the flags it
//     requires, excludes and sets, funded, its timeline message, and optional when the
//     lifecycle does not wait on it (no next step);
//  5. escrowtest/doc.go: its line of the table of actions (TestDocMatchesLifecycle);
//  6. escrowtest/auth_test.go: its entry in asCustomerMatrix, the one pin of the
//     As-Customer matrix;
//  7. escrowtest/auth_test.go: a case of TestAsCustomerMatrix;
//  8. escrowtest/lifecycle_test.go: the states in which TestIllegalTransitions finds it
//     legal.
//
// Then go generate rewrites AsCustomer's doc and the README's As-Customer list. Optional:
// a method of its own on TransactionsService (as Ship is), a NextAction constant and its
// phrase for NextStep.String (without one it reads "does dispute"), and a CHANGELOG line.
// An action the lifecycle waits on (not optional) becomes a next step in the SDK's and the
// emulator's NextSteps alike; the expected steps of state_test.go's TestNextSteps cases
// that reach its state then list it too (a ninth place).
//
// Observers (observe.go). The hooks are an interface, Observer, with an optional extension,
// AttemptObserver, that NewClient asks for once, as net/http asks a ResponseWriter for
// http.Flusher: a hook added later is another such extension, so an Observer written before
// it keeps compiling and working. Every hook runs on the call's goroutine, synchronously (an
// observer's context must be the one the request is sent with), under a recover: telemetry
// must not change what a call returns. The per-request hooks sit in a RoundTripper made per
// call, only when an AttemptObserver is set, under the http.Client: so they see each redirect
// as a request, as OpenTelemetry counts them, and cost nothing otherwise. A request ends
// when its headers arrive; reading the body is the call's, so that no request span is left
// open by a body the caller never reads, which the conventions allow and advise.
