package sqlstore_test

import (
	"slices"
	"testing"

	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/storetest"
)

// TestSettings: two Stores over one database (two replicas) share their settings.
func TestSettings(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			storetest.RunSettings(t, open(t, dsn), open(t, dsn))
		})
	}
}

// TestSharedSecretsAcrossReplicasAndRestarts: the first replica's secret is every
// replica's, and a store opened again still has it.
func TestSharedSecretsAcrossReplicasAndRestarts(t *testing.T) {
	for name, mk := range engines(t) {
		t.Run(name, func(t *testing.T) {
			dsn := mk(t)
			a, err := webhook.SharedSecrets(t.Context(), open(t, dsn))
			if err != nil || len(a) != 1 {
				t.Fatalf("SharedSecrets = %v, %v", a, err)
			}
			b, err := webhook.SharedSecrets(t.Context(), open(t, dsn))
			if err != nil || !slices.Equal(a, b) {
				t.Errorf("another replica's SharedSecrets = %v, %v; want the first's", b, err)
			}
		})
	}
}
