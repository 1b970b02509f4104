// Package hooksecret is what a webhook delivery secret looks like: the shape package
// webhook checks a secret against and masks in URLs, and that the emulator (escrowtest)
// masks in what it shows. It is apart from package webhook because the emulator cannot
// import that package: the SDK's own tests import the emulator, and webhook imports the
// SDK.
//
// One function, [Problem], decides what a secret is: webhook's parser accepts what it
// finds no problem with, and [MaskURL] hides every path segment it finds none with, so
// that no secret the parser accepts is ever shown.
package hooksecret

import (
	"fmt"
	"strings"
)

// Secret lengths: 22 base64url characters carry 128 bits, the least worth calling a secret.
const (
	MinLen = 22
	MaxLen = 128
)

// Alphabet is what a secret may hold: the characters a URL path segment carries
// unescaped, and base64url's alphabet.
const Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Problem says why s cannot be a delivery secret, without quoting it; "" when it can.
func Problem(s string) string {
	if len(s) < MinLen || len(s) > MaxLen {
		return fmt.Sprintf("it has %d characters, want %d to %d", len(s), MinLen, MaxLen)
	}
	if i := strings.IndexFunc(s, NotInAlphabet); i >= 0 {
		return fmt.Sprintf("character %d is not one of A-Z, a-z, 0-9, '-' and '_'", i+1)
	}
	return ""
}

// Shaped reports whether s can be a delivery secret: Problem finds none.
func Shaped(s string) bool { return Problem(s) == "" }

// NotInAlphabet reports a rune a secret may not hold.
func NotInAlphabet(r rune) bool {
	return !strings.ContainsRune(Alphabet, r)
}

// MaskURL returns u with each path segment that could be a secret (Shaped) replaced by
// "SECRET"; the host, query and fragment are kept. A segment the parser would accept is
// masked whatever it looks like, a word-like secret ("correct-horse-battery-staple-xyz")
// as much as a generated one: a path's own long words are masked with them, which costs a
// reader a word and never a secret. See webhook.MaskURL.
func MaskURL(u string) string {
	end := len(u)
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		end = i
	}
	start := 0
	if i := strings.Index(u[:end], "://"); i >= 0 {
		start = i + 3
	}
	segs := strings.Split(u[start:end], "/")
	for i, seg := range segs {
		if i > 0 && Shaped(seg) {
			segs[i] = "SECRET"
		}
	}
	return u[:start] + strings.Join(segs, "/") + u[end:]
}
