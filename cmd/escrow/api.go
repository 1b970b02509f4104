package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	escrow "github.com/escrowkit/escrow-go"
)

// exitAPI is the exit code of a command the API (or the network) refused.
const exitAPI = 1

// The environment variables that hold credentials. Production and sandbox credentials are
// kept apart because the two environments' accounts are independent (spec part 5): a
// sandbox key sent to production would only ever fail, and the reverse would be worse.
const (
	envEmail         = "ESCROW_EMAIL"
	envAPIKey        = "ESCROW_API_KEY"
	envSandboxEmail  = "ESCROW_SANDBOX_EMAIL"
	envSandboxAPIKey = "ESCROW_SANDBOX_API_KEY"
	// envBaseURL and envCACert stand in for --base-url and --ca-cert, so that a shell set
	// up once ('escrow emulator --env FILE', then '. FILE') needs no flag afterwards.
	envBaseURL = "ESCROW_BASE_URL"
	envCACert  = "ESCROW_CA_CERT"
)

// environmentVariables describes, for -h, every variable the CLI reads.
var environmentVariables = []struct{ names, meaning string }{
	{envEmail + ", " + envAPIKey, "the account's e-mail address and API key (credentials never come from flags)"},
	{envSandboxEmail + ", " + envSandboxAPIKey, "the same for the provider's sandbox, read with --sandbox"},
	{envBaseURL, "the API's base URL when --base-url is not given, such as an emulator's"},
	{envCACert, "a PEM file of certificates to trust when --ca-cert is not given"},
	{envWebhookSecret, "webhooks listen: the delivery secrets, current first, comma-separated (overrides the one kept in --store)"},
	{envWebhookStore + ", PGPASSWORD", "webhooks listen: the --store DSN when the flag is not given; PostgreSQL's password for a --store URL without one"},
}

// usageError is a command line that cannot be run; it exits with exitUsage.
type usageError struct{ msg string }

// Error returns the message, which names what to fix.
func (e *usageError) Error() string { return e.msg }

// usagef returns a *usageError.
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// apiFlags are the flags of every command that calls the API: where, as whom, and how to
// print the answer.
type apiFlags struct {
	baseURL    string
	sandbox    bool
	caCert     string
	asCustomer string
	as         string
	json       bool
	verbose    bool
	// observer, when set, sees every call (webhooks listen --metrics-addr).
	observer escrow.Observer
}

// register adds the flags to fs. actAs adds --as-customer, for commands that act on
// transactions.
func (f *apiFlags) register(fs *flag.FlagSet, actAs bool) {
	fs.StringVar(&f.baseURL, "base-url", "", "API base `URL` with its version segment, such as an emulator's (default $"+envBaseURL+", else production)")
	fs.BoolVar(&f.sandbox, "sandbox", false, "use the provider's sandbox and "+envSandboxEmail+" / "+envSandboxAPIKey+" instead of "+envEmail+" / "+envAPIKey)
	fs.StringVar(&f.caCert, "ca-cert", "", "also trust the PEM certificates in `file` (the one 'escrow emulator --cert-out' writes; default $"+envCACert+")")
	fs.BoolVar(&f.json, "json", false, "print JSON (the API's typed answer) instead of tables")
	fs.BoolVar(&f.verbose, "v", false, "log requests and retries on stderr")
	if actAs {
		fs.StringVar(&f.asCustomer, "as-customer", "", "act for the party with this `email` (approved partners only)")
	}
	fs.StringVar(&f.as, "as", "", "act as this emulator account (`email`) with a key the emulator gives it: no credentials to copy (emulators only)")
}

// credentialVars returns the names of the variables holding the e-mail and the API key.
func (f *apiFlags) credentialVars() (email, key string) {
	if f.sandbox {
		return envSandboxEmail, envSandboxAPIKey
	}
	return envEmail, envAPIKey
}

// requestOptions returns the per-call options the flags ask for.
func (f *apiFlags) requestOptions() []escrow.RequestOption {
	if f.asCustomer == "" {
		return nil
	}
	return []escrow.RequestOption{escrow.AsCustomer(f.asCustomer)}
}

// connect builds a client from the flags and the environment. release closes its idle
// connections; call it when the command is done. Missing credentials and unusable flags
// are usage errors.
func (f *apiFlags) connect(stderr io.Writer) (client *escrow.Client, release func(), err error) {
	if f.sandbox && f.baseURL != "" {
		return nil, nil, usagef("--sandbox and --base-url cannot be used together: --sandbox is the provider's sandbox at its own URL; drop it to use --base-url (or %s), or drop --base-url", envBaseURL)
	}
	f.fromEnvironment()
	if hint := versionHint(f.baseURL); hint != "" {
		// A warning, not a refusal: some gateway might serve the API elsewhere, but every
		// known server (production, sandbox, the emulator) needs the segment.
		fmt.Fprintf(stderr, "escrow: warning: %s\n", hint)
	}
	email, key, err := f.account()
	if err != nil {
		return nil, nil, err
	}
	transport, err := newTransport(f.caCert)
	if err != nil {
		return nil, nil, err
	}
	client, err = escrow.NewClient(email, key, f.clientOptions(transport, stderr)...)
	if err != nil {
		transport.CloseIdleConnections()
		// NewClient refuses a base URL it cannot use; nothing was sent.
		return nil, nil, usagef("%v", err)
	}
	return client, transport.CloseIdleConnections, nil
}

// account is the email and API key the client authenticates with: an emulator account's
// with --as, the environment's otherwise.
func (f *apiFlags) account() (email, key string, err error) {
	if f.as != "" {
		return f.emulatorAccount()
	}
	emailVar, keyVar := f.credentialVars()
	return credentials(emailVar, keyVar, f.environment())
}

// clientOptions are the client's options the flags choose: the server, the debug log on
// stderr with --verbose, and the observer.
func (f *apiFlags) clientOptions(transport http.RoundTripper, stderr io.Writer) []escrow.Option {
	opts := []escrow.Option{
		escrow.WithHTTPClient(&http.Client{Transport: transport, Timeout: time.Minute}),
		escrow.WithUserAgent("escrow-cli/" + escrow.Version),
	}
	switch {
	case f.sandbox:
		opts = append(opts, escrow.WithSandbox())
	case f.baseURL != "":
		opts = append(opts, escrow.WithBaseURL(f.baseURL))
	}
	if f.verbose {
		opts = append(opts, escrow.WithLogger(slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	}
	if f.observer != nil {
		opts = append(opts, escrow.WithObserver(f.observer))
	}
	return opts
}

// fromEnvironment fills what the flags leave unset from ESCROW_BASE_URL and
// ESCROW_CA_CERT. An explicit --sandbox wins over ESCROW_BASE_URL.
func (f *apiFlags) fromEnvironment() {
	if !f.sandbox {
		f.baseURL = orEnv(f.baseURL, envBaseURL)
	}
	f.caCert = orEnv(f.caCert, envCACert)
}

// orEnv returns a flag's value, or when the flag was left empty the environment
// variable that stands in for it.
func orEnv(value, variable string) string {
	if value == "" {
		return os.Getenv(variable)
	}
	return value
}

// versionHint returns a hint when a base URL lacks the API's version segment (a common
// slip: the emulator's origin instead of the URL it prints), else "".
func versionHint(baseURL string) string {
	u, err := url.Parse(baseURL)
	if baseURL == "" || err != nil || u.Host == "" || strings.Contains(u.Path, "/"+escrow.APIVersion) {
		return ""
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + escrow.APIVersion + "/"
	u.RawPath = ""
	return fmt.Sprintf("the base URL %s has no version segment: did you mean %s?", baseURL, u)
}

// environment names the environment the flags point at, for messages.
func (f *apiFlags) environment() string {
	switch {
	case f.sandbox:
		return "the sandbox"
	case f.baseURL != "":
		return f.baseURL
	}
	return "production"
}

// credentials reads an e-mail address and an API key from the environment. Its error names
// the missing variables and never any value.
func credentials(emailVar, keyVar, environment string) (email, key string, err error) {
	email, key = os.Getenv(emailVar), os.Getenv(keyVar)
	var missing []string
	if email == "" {
		missing = append(missing, emailVar+" (the account's e-mail address)")
	}
	if key == "" {
		missing = append(missing, keyVar+" (an API key of that account)")
	}
	if len(missing) > 0 {
		return "", "", usagef("credentials for %s are missing: set %s", environment, strings.Join(missing, " and "))
	}
	return email, key, nil
}

// newTransport returns a transport of the command's own, so that its connections can be
// closed at the end, which trusts the system's roots plus those in caFile.
func newTransport(caFile string) (*http.Transport, error) {
	t := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		IdleConnTimeout:     90 * time.Second,
		ForceAttemptHTTP2:   true,
		TLSClientConfig:     &tls.Config{MinVersion: tls.VersionTLS12},
	}
	if caFile == "" {
		return t, nil
	}
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		return nil, usagef("--ca-cert: %v", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pemBytes) {
		return nil, usagef("--ca-cert: %s holds no PEM certificate: pass the file 'escrow emulator --cert-out' (or --env) wrote", caFile)
	}
	t.TLSClientConfig.RootCAs = roots
	return t, nil
}

// parseFlags parses args with fs, allowing flags after positional arguments
// ("act 42 ship --carrier UPS") as users expect; "--" ends the flags. It returns the
// positional arguments, and flag.ErrHelp or a *usageError.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	// The flag package prints the usage on every parse error, after the error; exitCode
	// reports the error once with a pointer to -h instead. So the usage is printed here,
	// and only when -h asked for it.
	usage := fs.Usage
	fs.Usage = func() {}
	defer func() { fs.Usage = usage }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, err
			}
			return nil, explainFlagError(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// isSet reports whether the command line set the flag called name.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// exitCode prints err for a command and returns the exit code: 0 for nil, exitUsage for
// usage errors (with a hint to -h), exitAPI for everything else. Validation errors list
// every refused field with its path, one per line.
func exitCode(stderr io.Writer, name string, err error) int {
	if err == nil {
		return 0
	}
	var usage *usageError
	if errors.As(err, &usage) {
		fmt.Fprintf(stderr, "%s: %v\nRun '%s -h' for usage.\n", name, err, name)
		return exitUsage
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "%s: interrupted\n", name)
		return exitAPI
	}
	var verr *escrow.ValidationError
	if errors.As(err, &verr) {
		fmt.Fprintf(stderr, "%s: %s %s: %d: the request was refused:\n", name, verr.Method, verr.Path, verr.StatusCode)
		for _, f := range verr.Fields() {
			fmt.Fprintf(stderr, "  %s\n", f)
		}
		return exitAPI
	}
	// The SDK's errors start with "escrow: ", which the command's name already says.
	fmt.Fprintf(stderr, "%s: %s\n", name, strings.TrimPrefix(err.Error(), "escrow: "))
	var unknownCA x509.UnknownAuthorityError
	if errors.As(err, &unknownCA) {
		fmt.Fprintf(stderr, "The server's certificate is not trusted; for an emulator, pass the file 'escrow emulator --cert-out' wrote with --ca-cert.\n")
	}
	return exitAPI
}

// print writes v as indented JSON with --json, else what human writes: the one place the
// two forms of output part. It returns the exit code.
func (a *apiFlags) print(stdout, stderr io.Writer, name string, v any, human func(w io.Writer)) int {
	if a.json && v == nil {
		return 0 // an answer without a body (204) prints nothing, not "null"
	}
	if a.json {
		return exitCode(stderr, name, writeJSON(stdout, v))
	}
	human(stdout)
	return 0
}

// newTable returns the writer every table of the CLI is aligned with; Flush it.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// writeJSON prints v indented, as the typed value encodes it.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// isTerminal reports whether w is a character device, such as a terminal: progress is
// written to stderr only then, so that logs and pipes stay clean.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// withFlags adds flags to the first line of a synopsis, before its explanation.
func withFlags(synopsis, flags string) string {
	first, rest, explained := strings.Cut(synopsis, "\n\n")
	if explained {
		return first + " " + flags + "\n\n" + rest
	}
	return first + " " + flags
}

// newFlagSet returns a flag set that does not exit and prints nothing on its own: parse
// errors reach exitCode through parseFlags, and its usage goes to stderr on -h.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n\n", synopsis)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}
