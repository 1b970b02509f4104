// Package redacttest makes the texts the redaction tests and benchmarks read: those made
// to cost a redactor the most. It is apart from package redact so that the SDK's tests and
// the redactor's own share one recipe.
package redacttest

import (
	"fmt"
	"strings"
)

// forms write a character in the encodings a server echoes it in, and nested in each
// other, up to four layers deep.
var forms = []func(c byte) string{
	func(c byte) string { return fmt.Sprintf(`\u%04x`, c) },
	func(c byte) string { return fmt.Sprintf("&#%d;", c) },
	func(c byte) string { return fmt.Sprintf("%%%02X", c) },
	func(c byte) string { return fmt.Sprintf(`\u0026#x%x;`, c) },
	func(c byte) string { return fmt.Sprintf("&#37;%02x", c) },
	func(c byte) string { return fmt.Sprintf(`%%5Cu%04x`, c) },
	func(c byte) string { return fmt.Sprintf(`\u0025\u0032\u0035%%%02x`, c) }, // four layers
}

// Blocks returns about size bytes of blocks that each spell the first 8 characters of
// prefix (all of it when shorter), every character in another encoding, and then differ
// ("!"): a redactor that backtracks over the readings of each block pays for every one of
// them, and the account's e-mail alone gives an attacker such a prefix (the first 8
// characters of the Basic token are base64 of "email:").
func Blocks(prefix string, size int) string {
	var block strings.Builder
	for i := 0; i < min(8, len(prefix)); i++ {
		block.WriteString(forms[i%len(forms)](prefix[i]))
	}
	block.WriteString("!")
	return strings.Repeat(block.String(), max(size/block.Len(), 1))
}
