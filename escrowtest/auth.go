package escrowtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// asCustomerHeader names the party an approved partner acts for (spec part 5).
const asCustomerHeader = "As-Customer"

// hashSecret is how passwords and API keys are kept. A plain SHA-256 suffices because the
// emulator generates every secret itself with 130 bits of randomness: there is nothing
// for a slow, salted hash to protect against guessing.
func hashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// authenticate returns the account whose e-mail and password or active API key the
// request's Basic credentials give, or nil.
func (s *store) authenticate(r *http.Request) *account {
	email, secret, ok := r.BasicAuth()
	if !ok {
		return nil
	}
	a := s.accountByEmail(email)
	if a == nil {
		return nil
	}
	h := hashSecret(secret)
	if a.passwordHash != nil && subtle.ConstantTimeCompare(h, a.passwordHash) == 1 {
		return a
	}
	for _, k := range a.keys {
		if k.active && subtle.ConstantTimeCompare(h, k.hash) == 1 {
			return a
		}
	}
	return nil
}

// maxAPIKeys bounds an account's API keys.
const maxAPIKeys = 100

// issueKey gives the account a new active API key and returns it with the full key,
// which is not kept: the caller shows it once. Keys look like the live API's:
// "<digits>_<alphanumeric secret>", the digits being the key's id.
func (s *store) issueKey(a *account, name string, now time.Time) (*apiKey, string) {
	if len(a.keys) >= maxAPIKeys {
		// Only the harness gets here (the API refuses first): the oldest key retires, so
		// that seeding the same account again and again keeps its keys bounded.
		a.keys = slices.Delete(a.keys, 0, 1)
	}
	k := &apiKey{id: next(&s.ids.apiKey), name: name, created: now, active: true}
	full := fmt.Sprintf("%d_%s", k.id, rand.Text())
	k.hash, k.lastFour = hashSecret(full), full[len(full)-4:]
	a.keys = append(a.keys, k)
	return k, full
}

// issuePassword gives the account a new password and returns it; only its hash is kept.
func issuePassword(a *account) string {
	pw := rand.Text()
	a.passwordHash = hashSecret(pw)
	return pw
}

// notApprovedPartner is the live API's answer (403) to As-Customer from an account that
// is not an approved partner, word for word, as two public clients recorded it.
const notApprovedPartner = "Partner account not authorized to perform actions on behalf of customers."

// actor is who an action is performed as: the caller, or the party an approved partner
// names in As-Customer.
type actor struct {
	account   *account
	delegated bool
}

// actorFor resolves As-Customer for a request on a transaction the caller can read. Only
// an approved partner that is the transaction's partner party may use it, and only to
// name another party of that transaction.
func (e *Emulator) actorFor(req *request, tx *transaction) (actor, error) {
	name := req.Header.Get(asCustomerHeader)
	if name == "" {
		return actor{account: req.caller}, nil
	}
	if !req.caller.partner {
		return actor{}, forbidden(notApprovedPartner)
	}
	if !tx.hasRole(req.caller.id, rolePartner) {
		return actor{}, forbidden("only the partner of transaction %d may act for its parties", tx.id)
	}
	a := e.st.accountByEmail(name)
	if a == nil || !tx.isParty(a.id) {
		return actor{}, forbidden("%s %q names no party of transaction %d", asCustomerHeader, name, tx.id)
	}
	return actor{account: a, delegated: a.id != req.caller.id}, nil
}
