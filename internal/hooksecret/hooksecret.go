// Package hooksecret is what a webhook delivery secret looks like: the shape package
// webhook checks a secret against and masks in URLs, and that the emulator (escrowtest)
// masks in what it shows. It is apart from package webhook because the emulator cannot
// import that package: the SDK's own tests import the emulator, and webhook imports the
// SDK.
package hooksecret

import "strings"

// Secret lengths: 22 base64url characters carry 128 bits, the least worth calling a secret.
const (
	MinLen = 22
	MaxLen = 128
)

// Alphabet is what a secret may hold: the characters a URL path segment carries
// unescaped, and base64url's alphabet.
const Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Shaped reports whether s has the length and the alphabet of a secret.
func Shaped(s string) bool {
	return len(s) >= MinLen && len(s) <= MaxLen && strings.IndexFunc(s, NotInAlphabet) < 0
}

// NotInAlphabet reports a rune a secret may not hold.
func NotInAlphabet(r rune) bool {
	return !strings.ContainsRune(Alphabet, r)
}

// MaskURL returns u with each path segment shaped like a secret, a capital letter or a
// digit among its characters (as every generated secret has but almost no word of a
// path), replaced by "SECRET"; the host, query and fragment are kept. See webhook.MaskURL.
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
		if i > 0 && Shaped(seg) && strings.ContainsAny(seg, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") {
			segs[i] = "SECRET"
		}
	}
	return u[:start] + strings.Join(segs, "/") + u[end:]
}
