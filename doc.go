package escrow

// A note for whoever extends the SDK (the package documentation is in escrow.go). Routes
// and actions are facts written once, in two tables (endpoints.go, actions.go), and
// everything else derives from them (docs/design.md, "Facts live in one place"). The
// escrowtest emulator keeps its own tables, independent on purpose: the contract tests
// (contract_test.go) compare them. CONTRIBUTING.md has the recipes for adding a route and
// an action, each step with the test that fails when it is skipped.
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
