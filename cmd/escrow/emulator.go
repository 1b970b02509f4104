package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// shutdownGrace bounds how long the emulator waits for requests in flight when stopping.
const shutdownGrace = 5 * time.Second

// emulatorCommand is "escrow emulator": with no subcommand it serves an emulator; its
// subcommands drive one that is running, through the control API.
func emulatorCommand(subs map[string]command) command {
	return command{
		summary: "serve a local emulator of the escrow API over HTTPS (--env FILE: a shell's settings)",
		subs:    subs,
		run: func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
			if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
				return runGroup(ctx, "escrow emulator", subs, args, stdout, stderr)
			}
			return runEmulator(ctx, args, subs, stdout, stderr)
		},
	}
}

// runEmulator serves escrowtest's emulator over HTTPS with a certificate made for the
// occasion, prints the API's base URL on stdout, and stops on SIGINT or SIGTERM.
func runEmulator(ctx context.Context, args []string, subs map[string]command, stdout, stderr io.Writer) int {
	const name = "escrow emulator"
	fs := newFlagSet(name, "escrow emulator [--addr host:port] [--cert-out file] [--env file [--partner email]] [--state file] [-v]", stderr)
	addr := fs.String("addr", "127.0.0.1:8443", "`host:port` to listen on (port 0 picks a free one)")
	certOut := fs.String("cert-out", "", "write the self-signed certificate, PEM-encoded, to `file` so clients can trust it")
	envFile := fs.String("env", "", "write export lines for a shell to `file` (base URL, certificate, a partner's credentials); load them with '. file'")
	partner := fs.String("partner", demoPartner, "with --env: the `email` of the partner account made for the shell")
	verbose := fs.Bool("v", false, "log every request, not only webhook deliveries")
	state := fs.String("state", "", "load the emulator's state from `file` when it exists, and save it there on SIGINT or SIGTERM (0600: it holds key hashes and webhook secrets)")
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintln(stderr, "\nServes the escrow API below /2017-09-01/ and the emulator's control API below /_emulator/.")
		fmt.Fprintln(stderr, "\nControl endpoints (loopback clients only):")
		for _, ep := range escrowtest.ControlEndpoints() {
			fmt.Fprintf(stderr, "  %-6s %-44s %s\n", ep.Method, ep.Path, ep.Summary)
		}
		fmt.Fprintln(stderr)
		groupUsage(stderr, name, subs)
	}
	if code, ok := parseNone(fs, name, args, stderr); !ok {
		return code
	}
	if *envFile != "" && *certOut == "" {
		// The shell needs the certificate in a file: put it beside the settings.
		*certOut = strings.TrimSuffix(*envFile, filepath.Ext(*envFile)) + ".pem"
		if *certOut == *envFile {
			*certOut += ".pem"
		}
	}
	if *envFile != "" {
		// A file left by an earlier emulator would point a shell at a key that no longer
		// works: remove it before anything else, so that 'escrow emulator wait' and '. FILE'
		// find this emulator's file or none.
		if err := os.Remove(*envFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(stderr, "%s: %v\n", name, err)
			return exitAPI
		}
	}
	if *envFile == "" && isSet(fs, "partner") {
		return exitCode(stderr, name, usagef("--partner goes with --env: it names the partner whose key the --env file holds; add --env FILE, or make an account with 'escrow emulator customer EMAIL --partner'"))
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if err := serveEmulator(ctx, emulatorSettings{addr: *addr, certOut: *certOut, envFile: *envFile, partner: *partner, stateFile: *state}, stdout, stderr, log); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return exitAPI
	}
	return 0
}

// emulatorSettings are what "escrow emulator" was asked for.
type emulatorSettings struct {
	addr    string
	certOut string // "" writes no certificate
	envFile string // "" writes no shell settings
	partner string // the partner account made for envFile
	// stateFile is loaded at the start when it exists and saved at the end; "" for none.
	stateFile string
}

// serveEmulator serves until ctx ends, then shuts down gracefully. It prints the API's base
// URL on stdout and the page's address on stderr.
func serveEmulator(ctx context.Context, set emulatorSettings, stdout, stderr io.Writer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", set.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	host := displayHost(ln.Addr().(*net.TCPAddr))
	cert, certPEM, err := selfSignedCertificate(host)
	if err != nil {
		return err
	}
	if set.certOut != "" {
		if err := os.WriteFile(set.certOut, certPEM, 0o644); err != nil {
			return err
		}
	}

	emu := escrowtest.NewEmulator(escrowtest.WithLogger(log), escrowtest.WithUI(), escrowtest.WithHosts(servedHosts(set.addr, ln.Addr().(*net.TCPAddr))...))
	defer emu.Close()
	if set.stateFile != "" {
		loaded, err := loadState(emu, set.stateFile)
		if err != nil {
			return err
		}
		log.Info("escrow emulator state", "file", set.stateFile, "loaded", loaded)
	}
	origin := "https://" + net.JoinHostPort(host, fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	if set.envFile != "" {
		if err := writeEnvFile(set.envFile, origin+"/2017-09-01/", set.certOut, emu.AddPartner(set.partner)); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           emu,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		// HTTP/1.1 only: a fault that drops the connection takes it over, which HTTP/2
		// does not allow.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()

	fmt.Fprintln(stdout, origin+"/2017-09-01/")
	// stdout keeps its one line, the base URL, for scripts; the page is for a person.
	fmt.Fprintf(stderr, "escrow emulator: watch it at %s%s (a browser on this machine; trust --cert-out's certificate or accept it)\n", origin, escrowtest.UIPath)
	log.Info("escrow emulator serving", "api", origin+"/2017-09-01/", "control", origin+"/_emulator/", "ui", origin+escrowtest.UIPath, "cert_out", set.certOut)
	if set.envFile != "" {
		log.Info("shell settings written; load them with '. "+set.envFile+"'", "env", set.envFile, "partner", set.partner)
	}

	select {
	case err := <-served:
		return errors.Join(err, saveState(emu, set.stateFile, log))
	case <-ctx.Done():
	}
	log.Info("escrow emulator stopping")
	emu.Close() // first, so that injected latencies and webhook calls do not hold up Shutdown
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if served := <-served; !errors.Is(served, http.ErrServerClosed) {
		err = errors.Join(err, served)
	}
	// Saved once no request is in flight, so that what a client was told is in the file.
	return errors.Join(err, saveState(emu, set.stateFile, log))
}

// saveState writes the emulator's state to file, when there is one.
func saveState(emu *escrowtest.Emulator, file string, log *slog.Logger) error {
	if file == "" {
		return nil
	}
	if err := writeFileAtomic(file, emu.Snapshot); err != nil {
		return fmt.Errorf("saving the state to %s: %w", file, err)
	}
	log.Info("escrow emulator state saved", "file", file)
	return nil
}

// writeEnvFile writes the export lines that point a shell at the emulator as a partner.
// The file holds an API key, so only its owner may read it; the certificate's path is
// absolute so that the file works from any directory.
func writeEnvFile(file, baseURL, certFile string, partner escrowtest.Account) error {
	certPath, err := filepath.Abs(certFile)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# escrow emulator at %s, as the partner %s.\n", baseURL, partner.Email)
	fmt.Fprintf(&b, "# Load with '. %s'; valid while this emulator runs and until 'escrow emulator reset'.\n", file)
	for _, kv := range [][2]string{{envBaseURL, baseURL}, {envCACert, certPath}, {envEmail, partner.Email}, {envAPIKey, partner.APIKey}} {
		fmt.Fprintf(&b, "export %s=%s\n", kv[0], shellQuote(kv[1]))
	}
	// A shell that loads the file never finds half of it; it holds a key, so it is 0600.
	return writeFileAtomic(file, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// readEnvFile reads the base URL and the certificate's path from a file writeEnvFile
// wrote; ok is false when the file is missing or not yet whole.
func readEnvFile(file string) (baseURL, certFile string, ok bool) {
	values, err := envFileValues(file)
	if err != nil {
		return "", "", false
	}
	baseURL, certFile = values[envBaseURL], values[envCACert]
	return baseURL, certFile, baseURL != "" && certFile != ""
}

// envFileValues reads the KEY=VALUE lines (with or without "export ", values quoted for
// a POSIX shell or not) of a settings file.
func envFileValues(file string) (map[string]string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	values := map[string]string{}
	for line := range strings.Lines(string(data)) {
		k, v, found := strings.Cut(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export ")), "=")
		if !found || strings.HasPrefix(k, "#") {
			continue
		}
		values[k] = strings.ReplaceAll(strings.Trim(v, "'"), `'\''`, "'")
	}
	return values, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// servedHosts are the names and addresses, beyond the loopback ones, that requests may
// address the emulator by: the host --addr names, and the listening address, or every
// address of the machine's interfaces when it listens on all of them.
func servedHosts(addr string, ln *net.TCPAddr) []string {
	var hosts []string
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	if !ln.IP.IsUnspecified() {
		return append(hosts, ln.IP.String())
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			hosts = append(hosts, n.IP.String())
		}
	}
	return hosts
}

// displayHost is the host clients should use: the listening address, or 127.0.0.1 when
// the emulator listens on every address.
func displayHost(a *net.TCPAddr) string {
	if a.IP.IsUnspecified() {
		return "127.0.0.1"
	}
	return a.IP.String()
}

// selfSignedCertificate makes a certificate for localhost, the loopback addresses and
// host, valid for a year, and returns it with its PEM encoding. It is its own authority,
// so clients trust it by adding the PEM to their roots (curl --cacert, Go's RootCAs).
func selfSignedCertificate(host string) (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "escrow emulator", Organization: []string{"escrowtest"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsLoopback() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// runEmulatorWait is "escrow emulator wait FILE": it returns once an emulator started with
// --env FILE has written the file and answers, so that a script can start one in the
// background and load the file without a race.
func runEmulatorWait(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const name = "escrow emulator wait"
	fs := newFlagSet(name, name+" FILE [--timeout d]\n\nFILE is the --env file of an 'escrow emulator' starting in the background", stderr)
	timeout := fs.Duration("timeout", 30*time.Second, "give up after this `duration`")
	positional, code, ok := parseChecked(fs, name, args, want("the --env file"), stderr)
	if !ok {
		return code
	}
	file := positional[0]
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if base, cert, ok := readEnvFile(file); ok && emulatorAnswers(ctx, base, cert) {
			fmt.Fprintln(stdout, base)
			return 0
		}
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.Canceled) {
				return exitCode(stderr, name, ctx.Err())
			}
			fmt.Fprintf(stderr, "%s: no emulator wrote %s and answered within %s: is 'escrow emulator --env %[2]s' running? Its log on stderr says why it stopped.\n", name, file, *timeout)
			return exitAPI
		case <-tick.C:
		}
	}
}

// emulatorAnswers reports whether the emulator at baseURL answers its control API.
func emulatorAnswers(ctx context.Context, baseURL, certFile string) bool {
	c, release, err := (&controlFlags{baseURL: baseURL, caCert: certFile}).connect()
	if err != nil {
		return false
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = c.Endpoints(ctx)
	return err == nil
}
