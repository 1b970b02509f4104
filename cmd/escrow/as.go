package main

import (
	"context"
	"net"
	"net/url"
	"time"
)

// --as EMAIL acts as any account of an emulator without copying its key: the CLI asks the
// emulator's control API for a new API key of that account (POST /_emulator/customers,
// which makes the account when it has none) and uses it for this one command. It works
// against an emulator only, which is all that hands out keys; against the live API a
// command runs with the account's own credentials, or As-Customer for a partner.

// emulatorAccount returns credentials for the account --as names, from the emulator the
// base URL points at.
func (f *apiFlags) emulatorAccount() (email, key string, err error) {
	switch {
	case f.asCustomer != "":
		return "", "", usagef("--as and --as-customer do not go together: --as EMAIL acts as the account itself; --as-customer EMAIL acts for it as the partner")
	case f.sandbox || f.baseURL == "":
		return "", "", usagef("--as works against an emulator only (it asks the emulator for the account's key): against %s, set %s and %s to the account's own credentials, or, as an approved partner, use --as-customer EMAIL where the API takes it",
			f.environment(), envEmail, envAPIKey)
	}
	if u, perr := url.Parse(f.baseURL); perr != nil || !isLoopback(u.Hostname()) {
		return "", "", usagef("--as works against an emulator on this machine only, and %s is not on a loopback address: set %s and %s to the account's own credentials", f.baseURL, envEmail, envAPIKey)
	}
	c, release, err := (&controlFlags{baseURL: f.baseURL, caCert: f.caCert}).connect()
	if err != nil {
		return "", "", err
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := c.AddCustomer(ctx, f.as, false)
	if err != nil {
		return "", "", err
	}
	return a.Email, a.APIKey, nil
}

// isLoopback reports whether host names this machine: localhost or a loopback address.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
