package escrow

// A note for whoever extends the SDK (the package documentation is in escrow.go). Routes
// and actions are facts written once, in two tables (endpoints.go, actions.go), and
// everything else derives from them (docs/design.md, "Facts live in one place"). The
// escrowtest emulator keeps its own tables, independent on purpose: the contract tests
// (contract_test.go) compare them. CONTRIBUTING.md has the recipes for adding a route and
// an action, each step with the test that fails when it is skipped.
