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
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/escrowkit/escrow-go/escrowtest"
)

// shutdownGrace bounds how long the emulator waits for requests in flight when stopping.
const shutdownGrace = 5 * time.Second

// runEmulator is "escrow emulator": it serves escrowtest's emulator over HTTPS with a
// certificate made for the occasion, prints the API's base URL on stdout, and stops on
// SIGINT or SIGTERM.
func runEmulator(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("escrow emulator", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8443", "`host:port` to listen on (port 0 picks a free one)")
	certOut := fs.String("cert-out", "", "write the self-signed certificate, PEM-encoded, to `file` so clients can trust it")
	verbose := fs.Bool("v", false, "log every request, not only webhook deliveries")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: escrow emulator [--addr host:port] [--cert-out file] [-v]")
		fmt.Fprintln(stderr, "\nServes the escrow API below /2017-09-01/ and the emulator's control API below /_emulator/.")
		fmt.Fprintln(stderr, "\nControl endpoints (loopback clients only):")
		for _, ep := range escrowtest.ControlEndpoints() {
			fmt.Fprintf(stderr, "  %-6s %-44s %s\n", ep.Method, ep.Path, ep.Summary)
		}
		fmt.Fprintln(stderr)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "escrow emulator: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return exitUsage
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	if err := serveEmulator(ctx, *addr, *certOut, stdout, log); err != nil {
		fmt.Fprintf(stderr, "escrow emulator: %v\n", err)
		return 1
	}
	return 0
}

// serveEmulator serves until ctx ends, then shuts down gracefully.
func serveEmulator(ctx context.Context, addr, certOut string, stdout io.Writer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	host := displayHost(ln.Addr().(*net.TCPAddr))
	cert, certPEM, err := selfSignedCertificate(host)
	if err != nil {
		return err
	}
	if certOut != "" {
		if err := os.WriteFile(certOut, certPEM, 0o644); err != nil {
			return err
		}
	}

	emu := escrowtest.NewEmulator(escrowtest.WithLogger(log))
	defer emu.Close()
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

	origin := "https://" + net.JoinHostPort(host, fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	fmt.Fprintln(stdout, origin+"/2017-09-01/")
	log.Info("escrow emulator serving", "api", origin+"/2017-09-01/", "control", origin+"/_emulator/", "cert_out", certOut)

	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("escrow emulator stopping")
	emu.Close() // first, so that injected latencies and webhook calls do not hold up Shutdown
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
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
