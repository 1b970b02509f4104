package uitest

import (
	"context"
	"errors"
	"os"
	"os/exec"

	"github.com/chromedp/chromedp"
)

// ErrNoBrowser is returned by FindChromium when no Chromium is installed.
var ErrNoBrowser = errors.New("no Chromium found: set ESCROW_CHROMIUM, or install one (Debian: apt-get install chromium)")

// FindChromium returns the path of the Chromium to run: ESCROW_CHROMIUM, else the first
// of chromium, chromium-browser and google-chrome on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("ESCROW_CHROMIUM"); p != "" {
		return exec.LookPath(p)
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", ErrNoBrowser
}

// NewBrowser starts headless Chromium at execPath with a window of the given size and
// returns the context of its first tab; cancel stops the browser and removes its profile.
// The browser accepts the emulator's self-signed certificate: it only ever visits the
// emulator on the loopback interface.
func NewBrowser(ctx context.Context, execPath string, width, height int) (context.Context, context.CancelFunc) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.WindowSize(width, height),
		chromedp.IgnoreCertErrors,
		chromedp.DisableGPU,
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("font-render-hinting", "none"),
	)
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root (CI runs as root).
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tabCtx, cancelTab := chromedp.NewContext(allocCtx)
	return tabCtx, func() {
		cancelTab()
		cancelAlloc()
	}
}
