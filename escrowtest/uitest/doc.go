// Package uitest drives the emulator's page (escrowtest.WithUI, /_emulator/ui/) in
// headless Chromium. Its test takes a sale through the page's own controls and checks
// what the page shows at each step; `go generate` here makes docs/emulator.md's screenshot of
// a transaction's page with the same browser and the same sale.
//
// It is a module of its own so that the browser driver (chromedp) stays out of the SDK's
// go.mod. It runs Chromium from ESCROW_CHROMIUM, else chromium, chromium-browser or
// google-chrome on PATH (Debian: apt-get install chromium). Without one the test skips,
// saying so, unless ESCROW_REQUIRE_SERVERS is set, as in CI, which installs Chromium.
package uitest

//go:generate go run ./screenshot -o ../../docs/emulator-transaction.png
