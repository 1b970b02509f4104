package webhook_test

import (
	"testing"

	"github.com/escrowkit/escrow-go/webhook"
	"github.com/escrowkit/escrow-go/webhook/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Run(t, func(*testing.T) webhook.Store { return new(webhook.MemoryStore) })
}

func TestMemoryStoreWithReplicas(t *testing.T) {
	storetest.RunReplicas(t, func(*testing.T) webhook.Store { return new(webhook.MemoryStore) })
}
