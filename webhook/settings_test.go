package webhook_test

import (
	"testing"

	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/storetest"
)

func TestMemoryStoreSettings(t *testing.T) {
	s := new(webhook.MemoryStore)
	storetest.RunSettings(t, s, s)
}
