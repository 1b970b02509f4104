package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/escrowtest"
)

// "escrow conformance" measures a server against what the SDK expects of the API: a
// built-in suite of scenarios run through the SDK (conformanceChecks), or, with
// --cassettes, exchanges recorded by "escrow record" replayed in order
// (escrowtest.Replay). Either prints one line per check or difference and a total, and
// exits 0 only when nothing failed, so that "the emulator differs from the sandbox" is a
// command anyone can run and a file anyone can send.

// Buyer and seller credentials for a server without the emulator's control API.
const (
	envBuyerEmail   = "ESCROW_BUYER_EMAIL"
	envBuyerAPIKey  = "ESCROW_BUYER_API_KEY"
	envSellerEmail  = "ESCROW_SELLER_EMAIL"
	envSellerAPIKey = "ESCROW_SELLER_API_KEY"
)

// conformanceFlags are the command's flags.
type conformanceFlags struct {
	against, envFile, caCert, cassettes string
	buyerEnv, sellerEnv                 string
	sandbox                             bool
}

// runConformance is "escrow conformance --against URL".
func runConformance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow conformance"
	fs := newFlagSet(name, name+" (--against URL | --sandbox) [--env FILE] [--buyer-env FILE --seller-env FILE] [--cassettes DIR] [--ca-cert file]\n\n"+
		"Runs the built-in scenarios through the SDK against URL, or replays the cassettes 'escrow record' wrote.\n"+
		"Against an emulator it makes the accounts it needs; elsewhere (the sandbox) it acts as the account of\n"+
		"--env or "+envEmail+"/"+envAPIKey+" (an approved partner, for the As-Customer checks), with a buyer and a\n"+
		"seller account from --buyer-env and --seller-env (or "+envBuyerEmail+"/"+envBuyerAPIKey+" and "+envSellerEmail+"/"+envSellerAPIKey+").\n"+
		"Exit status 0 only when no check failed.", stderr)
	var f conformanceFlags
	fs.StringVar(&f.against, "against", "", "the API's base `URL`, with its version segment (default $"+envBaseURL+")")
	fs.BoolVar(&f.sandbox, "sandbox", false, "run against the provider's sandbox, as the account of "+envSandboxEmail+" and "+envSandboxAPIKey)
	fs.StringVar(&f.envFile, "env", "", "read "+envEmail+", "+envAPIKey+", "+envBaseURL+" and "+envCACert+" from this `file` of export lines, such as 'escrow emulator --env' writes")
	fs.StringVar(&f.buyerEnv, "buyer-env", "", "the buyer account's credentials: a `file` setting "+envEmail+" and "+envAPIKey)
	fs.StringVar(&f.sellerEnv, "seller-env", "", "the seller account's credentials: a `file` setting "+envEmail+" and "+envAPIKey)
	fs.StringVar(&f.cassettes, "cassettes", "", "replay the cassettes of this `directory` instead of the built-in scenarios; the recording's accounts are given keys by --env, --buyer-env and --seller-env (with --sandbox, the environment too), and an emulator makes the others")
	fs.StringVar(&f.caCert, "ca-cert", "", "also trust the PEM certificates in `file` (default $"+envCACert+")")
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	env, err := f.environment()
	if err != nil {
		return exitCode(stderr, name, err)
	}
	transport, err := newTransport(cmp.Or(f.caCert, env[envCACert]))
	if err != nil {
		return exitCode(stderr, name, err)
	}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport, Timeout: time.Minute}
	if f.cassettes != "" {
		return replayCassettes(ctx, f, env, hc, stdout, stderr)
	}
	s, err := newConformance(ctx, f, env, hc)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	if _, failed := s.run(ctx, conformanceChecks, stdout); failed > 0 {
		return exitAPI
	}
	return 0
}

// environment returns the settings the command reads: --env's file over the process's
// environment, and checks --against.
func (f *conformanceFlags) environment() (map[string]string, error) {
	env := map[string]string{}
	for _, k := range []string{envEmail, envAPIKey, envBaseURL, envCACert} {
		env[k] = os.Getenv(k)
	}
	if f.sandbox {
		if f.against != "" {
			return nil, usagef("--sandbox and --against cannot be used together: --sandbox is the provider's sandbox at its own URL")
		}
		f.against = escrow.SandboxURL
		env[envEmail], env[envAPIKey], env[envBaseURL] = os.Getenv(envSandboxEmail), os.Getenv(envSandboxAPIKey), ""
	}
	if f.envFile != "" {
		values, err := envFileValues(f.envFile)
		if err != nil {
			return nil, usagef("--env: %v", err)
		}
		for k, v := range values {
			env[k] = v
		}
	}
	f.against = cmp.Or(f.against, env[envBaseURL])
	if f.against == "" {
		return nil, usagef("which server? pass --against URL, the API's base URL with its version segment")
	}
	return env, nil
}

// replayCassettes is "escrow conformance --cassettes DIR": each difference on a line, then
// the total.
func replayCassettes(ctx context.Context, f conformanceFlags, env map[string]string, hc *http.Client, stdout, stderr io.Writer) int {
	const name = "escrow conformance"
	cassettes, err := escrowtest.ReadCassettes(f.cassettes)
	if err != nil {
		return exitCode(stderr, name, usagef("--cassettes: %v", err))
	}
	keys, err := replayKeys(f, env)
	if err != nil {
		return exitCode(stderr, name, err)
	}
	opts := []escrowtest.ReplayOption{escrowtest.ReplayHTTPClient(hc), escrowtest.ReplayCredentials(keys)}
	diffs, err := escrowtest.Replay(ctx, f.cassettes, f.against, opts...)
	if err != nil {
		for _, d := range diffs {
			fmt.Fprintf(stdout, "DIFF %s\n", d)
		}
		return exitCode(stderr, name, err)
	}
	printReplay(stdout, cassettes, diffs)
	if len(diffs) > 0 {
		return exitAPI
	}
	return 0
}

// printReplay prints a line for each exchange replayed alike, and one for each difference
// of the others, in the order of the recording, then the total.
func printReplay(w io.Writer, cassettes []escrowtest.Cassette, diffs []escrowtest.Difference) {
	bySeq := map[int][]escrowtest.Difference{}
	for _, d := range diffs {
		bySeq[d.Seq] = append(bySeq[d.Seq], d)
	}
	exchanges := 0
	for _, c := range cassettes {
		if c.Kind != escrowtest.CassetteExchange {
			continue
		}
		exchanges++
		if len(bySeq[c.Seq]) == 0 {
			fmt.Fprintf(w, "ok   #%d %s %s: %d\n", c.Seq, c.Method, c.Path, c.Status)
		}
		for _, d := range bySeq[c.Seq] {
			fmt.Fprintf(w, "DIFF %s\n", d)
		}
	}
	fmt.Fprintf(w, "%d exchanges replayed, %d differences\n", exchanges, len(diffs))
}

// replayKeys are the credentials a replay is given, by e-mail address: those of the --env,
// --buyer-env and --seller-env files and, with --sandbox, of the environment. Without
// --sandbox the environment's are left out: they may well be another emulator's (a shell
// set up with '. FILE'), and an emulator makes the accounts a replay needs.
func replayKeys(f conformanceFlags, env map[string]string) (map[string]string, error) {
	keys := map[string]string{}
	if f.envFile != "" || f.sandbox {
		addKey(keys, env[envEmail], env[envAPIKey])
	}
	for _, p := range []struct{ flag, file, emailVar, keyVar string }{
		{"--buyer-env", f.buyerEnv, envBuyerEmail, envBuyerAPIKey},
		{"--seller-env", f.sellerEnv, envSellerEmail, envSellerAPIKey},
	} {
		if p.file == "" && !f.sandbox {
			continue
		}
		email, key, err := credentialsFrom(p.file, p.emailVar, p.keyVar)
		if err != nil {
			return nil, usagef("%s: %v", p.flag, err)
		}
		addKey(keys, email, key)
	}
	return keys, nil
}

// addKey adds an account's key to keys when both its e-mail address and key are known.
func addKey(keys map[string]string, email, key string) {
	if email != "" && key != "" {
		keys[email] = key
	}
}

// account is one account the suite acts as.
type account struct {
	email  string
	client *escrow.Client
}

// conformance is one run of the suite: its accounts and what its scenarios made.
type conformance struct {
	partner, buyer, seller account
	// control is the emulator's control API; nil against a server without one, where the
	// checks that need it (a payment arriving) are skipped.
	control *escrowtest.ControlClient
	// tag makes references and webhook URLs unique to this run.
	tag string
	// txs are the transactions of the scenarios, by scenario.
	txs map[string]*escrow.Transaction
	// hookID is the webhook the webhook scenario made.
	hookID    int64
	newClient func(email, key string) (*escrow.Client, error)
}

// newConformance sets a run up: against an emulator it makes a partner (unless
// credentials are given), a buyer and a seller; elsewhere it needs all three.
func newConformance(ctx context.Context, f conformanceFlags, env map[string]string, hc *http.Client) (*conformance, error) {
	s := &conformance{tag: runID(), txs: map[string]*escrow.Transaction{}}
	s.newClient = func(email, key string) (*escrow.Client, error) {
		c, err := escrow.NewClient(email, key, escrow.WithBaseURL(f.against), escrow.WithHTTPClient(hc),
			escrow.WithUserAgent("escrow-conformance/"+escrow.Version), escrow.WithMaxRetries(1), escrow.WithMaxWait(time.Second))
		if err != nil {
			return nil, usagef("--against: %v", err)
		}
		return c, nil
	}
	if c, err := escrowtest.NewControlClient(f.against, hc); err == nil && !f.sandbox {
		if _, err := c.Endpoints(ctx); err == nil {
			s.control = c
		}
	}
	if s.control != nil {
		return s, s.emulatorAccounts(ctx, env)
	}
	return s, s.givenAccounts(f, env)
}

// runID is a short random suffix that keeps one run's references apart from another's.
func runID() string {
	var b [4]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// emulatorAccounts makes the run's accounts on an emulator.
func (s *conformance) emulatorAccounts(ctx context.Context, env map[string]string) error {
	add := func(a *account, role string, partner bool) error {
		acct, err := s.control.AddCustomer(ctx, fmt.Sprintf("conformance-%s-%s@example.com", role, s.tag), partner)
		if err != nil {
			return err
		}
		a.email = acct.Email
		a.client, err = s.newClient(acct.Email, acct.APIKey)
		return err
	}
	if env[envEmail] != "" && env[envAPIKey] != "" {
		var err error
		s.partner.email = env[envEmail]
		if s.partner.client, err = s.newClient(env[envEmail], env[envAPIKey]); err != nil {
			return err
		}
	} else if err := add(&s.partner, "partner", true); err != nil {
		return err
	}
	if err := add(&s.buyer, "buyer", false); err != nil {
		return err
	}
	return add(&s.seller, "seller", false)
}

// givenAccounts takes the three accounts' credentials from the environment and the files.
func (s *conformance) givenAccounts(f conformanceFlags, env map[string]string) error {
	buyerEmail, buyerKey, err := credentialsFrom(f.buyerEnv, envBuyerEmail, envBuyerAPIKey)
	if err != nil {
		return usagef("--buyer-env: %v", err)
	}
	sellerEmail, sellerKey, err := credentialsFrom(f.sellerEnv, envSellerEmail, envSellerAPIKey)
	if err != nil {
		return usagef("--seller-env: %v", err)
	}
	var missing []string
	for _, a := range []struct {
		acct        *account
		email, key  string
		what, where string
	}{
		{&s.partner, env[envEmail], env[envAPIKey], "the partner", "--env FILE, or " + envEmail + " and " + envAPIKey},
		{&s.buyer, buyerEmail, buyerKey, "a buyer", "--buyer-env FILE, or " + envBuyerEmail + " and " + envBuyerAPIKey},
		{&s.seller, sellerEmail, sellerKey, "a seller", "--seller-env FILE, or " + envSellerEmail + " and " + envSellerAPIKey},
	} {
		if a.email == "" || a.key == "" {
			missing = append(missing, a.what+" ("+a.where+")")
			continue
		}
		c, err := s.newClient(a.email, a.key)
		if err != nil {
			return err
		}
		*a.acct = account{email: a.email, client: c}
	}
	if len(missing) > 0 {
		return usagef("%s answers no emulator control API, so the suite cannot make its accounts there: it needs three accounts of that server, "+
			"and these are missing: %s", f.against, strings.Join(missing, "; "))
	}
	return nil
}

// credentialsFrom reads an e-mail address and a key from a settings file's ESCROW_EMAIL and
// ESCROW_API_KEY, or without a file from two environment variables.
func credentialsFrom(file, emailVar, keyVar string) (email, key string, err error) {
	if file == "" {
		return os.Getenv(emailVar), os.Getenv(keyVar), nil
	}
	v, err := envFileValues(file)
	return v[envEmail], v[envAPIKey], err
}

// check is one row of the suite: a step of a scenario and what it must show.
type check struct {
	scenario, name string
	// control marks a step that needs the emulator's control API (a payment arriving).
	control bool
	// standalone marks a step that depends on no other: it runs whatever failed before.
	standalone bool
	do         func(ctx context.Context, s *conformance) error
}

// checkTimeout bounds one check.
const checkTimeout = 30 * time.Second

// run runs the checks in order, printing a line for each, and the total. A scenario whose
// step failed or was skipped skips its later steps.
func (s *conformance) run(ctx context.Context, checks []check, w io.Writer) (passed, failed int) {
	broken := map[string]string{}
	skipped := 0
	for _, c := range checks {
		label := c.scenario + ": " + c.name
		if why, skip := s.skipWhy(c, broken); skip {
			skipped++
			fmt.Fprintf(w, "SKIP %s (%s)\n", label, why)
			continue
		}
		if err := s.runOne(ctx, c); err != nil {
			failed++
			broken[c.scenario] = "an earlier step failed"
			fmt.Fprintf(w, "FAIL %s: %s\n", label, strings.TrimPrefix(err.Error(), "escrow: "))
			continue
		}
		passed++
		fmt.Fprintf(w, "ok   %s\n", label)
	}
	fmt.Fprintf(w, "%d passed, %d failed", passed, failed)
	if skipped > 0 {
		fmt.Fprintf(w, ", %d skipped", skipped)
	}
	fmt.Fprintln(w)
	return passed, failed
}

// skipWhy says whether a check is skipped, and why: its scenario is broken (by the reason
// broken holds for it) and the check is not standalone, or it needs the control API the
// suite lacks, which breaks its scenario.
func (s *conformance) skipWhy(c check, broken map[string]string) (string, bool) {
	if why, ok := broken[c.scenario]; ok && !c.standalone {
		return why, true
	}
	if c.control && s.control == nil {
		broken[c.scenario] = "an earlier step was skipped"
		return "needs the emulator's control API (a payment arriving)", true
	}
	return "", false
}

// runOne runs a check within checkTimeout.
func (s *conformance) runOne(ctx context.Context, c check) error {
	cctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	return c.do(cctx, s)
}

// errCheck is a check whose answer was not what the API should give.
var errCheck = errors.New("unexpected answer")

func failf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errCheck, fmt.Sprintf(format, args...))
}
