package webhook

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/escrowkit/escrow-go/internal/hooksecret"
)

// ErrSecret matches every error about a delivery secret that cannot be used: none set,
// or one that is not 22 to 128 characters of A-Z, a-z, 0-9, '-' and '_'.
var ErrSecret = errors.New("webhook: unusable delivery secret")

// NewSecret returns a new random delivery secret: 32 bytes from crypto/rand, base64url
// (43 characters), fit for Options.Secrets and for the last segment of a URL path.
func NewSecret() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// checkSecret says why s cannot be a delivery secret, without quoting it: the one test
// (hooksecret.Problem) that MaskURL masks by too.
func checkSecret(s string) error {
	if why := hooksecret.Problem(s); why != "" {
		return fmt.Errorf("%w: %s", ErrSecret, why)
	}
	return nil
}

// DeliveryURL returns the URL to register for deliveries to this handler: base with the
// current secret (Options.Secrets[0]) appended as a last path segment, so that
// "https://shop.example/escrow/webhook" becomes "https://shop.example/escrow/webhook/SECRET"
// (mount the handler on "/escrow/webhook/"). base must be an absolute http or https URL;
// its query, if any, is kept. The URL is a credential: keep it out of logs.
func (h *Handler) DeliveryURL(base string) (string, error) {
	if len(h.opt.Secrets) == 0 {
		return "", fmt.Errorf("%w: Options.Secrets is empty", ErrSecret)
	}
	if err := checkSecret(h.opt.Secrets[0]); err != nil {
		return "", fmt.Errorf("the current secret (Options.Secrets[0]): %w", err)
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
		return "", fmt.Errorf("webhook: base %q is not an absolute http or https URL without a fragment", base)
	}
	// The secret needs no escaping; RawPath keeps the base's own escapes ("a%2Fb").
	raw := strings.TrimSuffix(u.EscapedPath(), "/") + "/" + h.opt.Secrets[0]
	u.Path, u.RawPath = strings.TrimSuffix(u.Path, "/")+"/"+h.opt.Secrets[0], raw
	return u.String(), nil
}

// MaskURL returns a webhook URL fit to show where it may be kept (a terminal's scrollback,
// a CI log): each path segment that ParseSecrets would accept as a delivery secret (22 to
// 128 characters of A-Z, a-z, 0-9, '-' and '_', whatever they spell) becomes "SECRET", as
// DeliveryURL's last one carries it. The test is of shape alone, so a URL registered
// without a secret keeps its path unless a segment could be one (a long word of letters,
// '-' and '_' is masked too); the host, query and fragment are kept.
func MaskURL(u string) string { return hooksecret.MaskURL(u) }

// Settings is an optional interface of a Store: a few named values shared by every
// replica using the store and kept across restarts, such as the delivery secrets
// ([SharedSecrets]). MemoryStore and sqlstore.Store implement it.
type Settings interface {
	// Setting returns the value kept under key; ok is false when there is none.
	Setting(ctx context.Context, key string) (value string, ok bool, err error)
	// InitSetting keeps value under key unless the key already has one, atomically, and
	// returns the value kept: of replicas starting at once, the first one's value wins.
	InitSetting(ctx context.Context, key, value string) (kept string, err error)
	// PutSetting keeps value under key, replacing any.
	PutSetting(ctx context.Context, key, value string) error
}

// SecretsSetting is the Settings key of the delivery secrets: current first, then those
// still accepted during a rotation, separated by commas.
const SecretsSetting = "delivery_secrets"

// ErrNoSettings: the store does not implement Settings.
var ErrNoSettings = errors.New("webhook: the store keeps no settings")

// SharedSecrets returns the delivery secrets kept in store (current first), keeping a new
// one there first if it has none, so that every replica and restart sharing the store
// uses the same. It fails with ErrNoSettings when store does not implement Settings, and
// with ErrSecret when what is kept is unusable.
func SharedSecrets(ctx context.Context, store Store) ([]string, error) {
	s, ok := store.(Settings)
	if !ok {
		return nil, ErrNoSettings
	}
	kept, err := s.InitSetting(ctx, SecretsSetting, NewSecret())
	if err != nil {
		return nil, fmt.Errorf("webhook: keeping the delivery secret: %w", err)
	}
	return ParseSecrets(kept)
}

// ParseSecrets splits a comma-separated list of secrets (current first), such as the
// SecretsSetting value or an environment variable, and checks each.
func ParseSecrets(list string) ([]string, error) {
	var out []string
	for i, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if err := checkSecret(s); err != nil {
			return nil, fmt.Errorf("secret %d of the list: %w", i+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}
