package webhook_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/escrowkit/escrow-go/webhook"
)

// TestNeverSeenIdsWaitingAtShutdownAreListedAfterARestart: the never-seen ids a handler
// shut down with, queued or owed a look, stay owed in the Store; the next process over
// it lists and hands them over (FromReconcile: their names were not kept) with no
// reconciler, once any delivery wakes it.
func TestNeverSeenIdsWaitingAtShutdownAreListedAfterARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		for id := int64(1); id <= 40; id++ {
			api.txs[id] = created(id)
		}
		store := new(webhook.MemoryStore)
		busy := &heldReads{api: api, id: 1, gate: make(chan struct{})}
		before := &calls{}
		first := webhook.NewHandler(clientOver(t, busy), before.fn, webhook.Options{Store: store, Workers: 1, MaxUnseen: 10})
		for id := int64(1); id <= 40; id++ {
			deliver(first, "create", id)
			synctest.Wait() // the first's fetch hangs: the others wait for the worker
		}
		stopped, stop := context.WithCancel(t.Context())
		stop() // no waiting for the queues
		done := make(chan struct{})
		go func() {
			first.Shutdown(stopped)
			close(done)
		}()
		synctest.Wait() // Shutdown waits for the hanging fetch
		close(busy.gate)
		<-done
		owed, err := store.Owed(t.Context(), 40, 100)
		if err != nil || len(owed) != 39 {
			t.Fatalf("the Store owes %d ids (%v) after the shutdown, want the 39 never confirmed", len(owed), err)
		}

		after := &calls{}
		second := webhook.NewHandler(api.client(t), after.fn, webhook.Options{Store: store})
		defer shutdown(t, second)
		deliver(second, "create", 1)
		time.Sleep(time.Second)
		flushed(t, second)
		var want []string
		for id := int64(1); id <= 40; id++ {
			want = append(want, fmt.Sprintf("create:%d", id))
		}
		if got := slices.Sorted(slices.Values(after.list())); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("after the restart, handed over %v; want every create", got)
		}
		if n := after.count(webhook.FromReconcile); n != 39 {
			t.Errorf("%d hand-overs FromReconcile, want the 39 owed", n)
		}
		if owed, _ := store.Owed(t.Context(), 40, 100); len(owed) != 0 {
			t.Errorf("the Store still owes %v", owed)
		}
	})
}

// TestReplicaRefusedTheListLeaseHandsItsIdsToTheStore: while another replica lists the
// never-seen ids (it holds the list lease), a replica lists none of its own: it hands them
// to the Store, where the listing finds them; once the lease is free it lists what the
// Store still owes, its own included.
func TestReplicaRefusedTheListLeaseHandsItsIdsToTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		for id := int64(1); id <= 30; id++ {
			api.txs[id] = created(id)
		}
		store := new(webhook.MemoryStore)
		now := time.Now()
		other := webhook.Lease{TransactionID: -1, Holder: "the other replica", Expires: now.Add(5 * time.Second)}
		if turn, err := store.Acquire(t.Context(), other, nil, now); err != nil || !turn.Granted {
			t.Fatalf("the other replica's list lease: %+v, %v", turn, err)
		}
		busy := &heldReads{api: api, id: 1, gate: make(chan struct{})}
		got := &calls{}
		h := webhook.NewHandler(clientOver(t, busy), got.fn, webhook.Options{Store: store, Workers: 1})
		defer shutdown(t, h)
		for id := int64(1); id <= 30; id++ {
			deliver(h, "create", id)
			synctest.Wait()
		}
		close(busy.gate) // the others are looked up, unknown, and wait for a listing
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := api.listsServed(); n != 0 {
			t.Errorf("%d pages listed while another replica held the list lease", n)
		}
		if owed, err := store.Owed(t.Context(), 30, 100); err != nil || len(owed) != 29 {
			t.Errorf("the Store owes %v (%v), want the 29 ids waiting here", owed, err)
		}
		time.Sleep(5 * time.Second) // the other's lease ends
		flushed(t, h)
		if l := got.list(); len(l) != 30 {
			t.Errorf("handed over %d of 30 once the lease was free: %v", len(l), l)
		}
		if n := api.listsServed(); n == 0 || n > 2 {
			t.Errorf("%d pages listed for 29 ids, want one or two", n)
		}
		if owed, _ := store.Owed(t.Context(), 30, 100); len(owed) != 0 {
			t.Errorf("the Store still owes %v", owed)
		}
	})
}
