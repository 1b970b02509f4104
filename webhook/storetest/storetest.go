// Package storetest checks that a webhook.Store keeps the promises the Handler relies on:
// claims are atomic, all-or-nothing, exclusive until done, released or expired; done
// facts are never granted again; finished transactions and the reconciler's mark are
// kept. Each implementation's tests run it against a fresh store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/escrowkit/escrow-go/webhook"
)

// Run checks the Store that fresh returns; fresh returns an empty store each call.
func Run(t *testing.T, fresh func(t *testing.T) webhook.Store) {
	t.Run("ClaimsAreExclusiveUntilDone", func(t *testing.T) { claimsAreExclusive(t, fresh(t)) })
	t.Run("ReleaseAndLease", func(t *testing.T) { releaseAndLease(t, fresh(t)) })
	t.Run("DoneIsAllOrNothing", func(t *testing.T) { doneIsAllOrNothing(t, fresh(t)) })
	t.Run("FinishedAndMark", func(t *testing.T) { finishedAndMark(t, fresh(t)) })
	t.Run("ConcurrentClaimsGrantOnce", func(t *testing.T) { concurrentClaims(t, fresh(t)) })
}

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func claim(id int64, owner string, facts ...string) webhook.Claim {
	return webhook.Claim{TransactionID: id, Facts: facts, Owner: owner, Expires: t0.Add(time.Minute)}
}

func mustClaim(t *testing.T, s webhook.Store, c webhook.Claim, now time.Time, want bool) {
	t.Helper()
	got, err := s.Claim(t.Context(), c, now)
	if err != nil {
		t.Fatalf("Claim(%+v): %v", c, err)
	}
	if got != want {
		t.Fatalf("Claim(%+v) at %v = %v, want %v", c, now.Sub(t0), got, want)
	}
}

func handed(t *testing.T, s webhook.Store, id int64) []string {
	t.Helper()
	h, err := s.Handed(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Sorted(maps.Keys(h))
}

func claimsAreExclusive(t *testing.T, s webhook.Store) {
	ctx := t.Context()
	if got := handed(t, s, 1); len(got) != 0 {
		t.Fatalf("empty store hands %v", got)
	}
	a := claim(1, "a", "create", "agree")
	mustClaim(t, s, a, t0, true)
	mustClaim(t, s, claim(1, "b", "agree"), t0, false)            // held by a
	mustClaim(t, s, claim(1, "b", "ship:1", "create"), t0, false) // all or nothing
	mustClaim(t, s, claim(1, "b", "ship:1"), t0, true)            // not all-or-nothing's victim
	mustClaim(t, s, claim(2, "b", "agree"), t0, true)             // another transaction
	mustClaim(t, s, a, t0, true)                                  // the owner may renew
	if got := handed(t, s, 1); len(got) != 0 {
		t.Errorf("claimed facts count as handed: %v", got)
	}
	if err := s.Done(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got := handed(t, s, 1); !slices.Equal(got, []string{"agree", "create"}) {
		t.Errorf("Handed = %v", got)
	}
	mustClaim(t, s, claim(1, "b", "create"), t0.Add(time.Hour), false) // done is forever
	mustClaim(t, s, claim(1, "a", "create"), t0, false)                // even for its owner
	if err := s.Done(ctx, claim(1, "c", "ship:1")); !errors.Is(err, webhook.ErrClaimLost) {
		t.Errorf("Done of another's claim: %v, want ErrClaimLost", err)
	}
}

func releaseAndLease(t *testing.T, s webhook.Store) {
	ctx := t.Context()
	a := claim(7, "a", "ship:1")
	mustClaim(t, s, a, t0, true)
	if err := s.Release(ctx, claim(7, "b", "ship:1")); err != nil { // not b's: no effect
		t.Fatal(err)
	}
	mustClaim(t, s, claim(7, "b", "ship:1"), t0, false)
	if err := s.Release(ctx, a); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, claim(7, "b", "ship:1"), t0, true)
	// b dies holding it; once the lease has ended (at Expires itself), c takes it over and
	// b's late Done is refused.
	mustClaim(t, s, claim(7, "c", "ship:1"), t0.Add(59*time.Second), false)
	c := claim(7, "c", "ship:1")
	c.Expires = t0.Add(3 * time.Minute)
	mustClaim(t, s, c, t0.Add(time.Minute), true)
	if err := s.Done(ctx, claim(7, "b", "ship:1")); !errors.Is(err, webhook.ErrClaimLost) {
		t.Errorf("Done after takeover: %v, want ErrClaimLost", err)
	}
	if err := s.Done(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := handed(t, s, 7); !slices.Equal(got, []string{"ship:1"}) {
		t.Errorf("Handed = %v", got)
	}
	if err := s.Release(ctx, c); err != nil { // releasing a done claim undoes nothing
		t.Fatal(err)
	}
	if got := handed(t, s, 7); !slices.Equal(got, []string{"ship:1"}) {
		t.Errorf("after Release of a done claim: Handed = %v", got)
	}
}

// doneIsAllOrNothing: when another owner took over one fact of a claim after its lease,
// the claim's Done records none of its facts: the event is handed over whole or not at all.
func doneIsAllOrNothing(t *testing.T, s webhook.Store) {
	a := claim(8, "a", "payment_disbursed:1", "payment_disbursed:2")
	mustClaim(t, s, a, t0, true)
	b := claim(8, "b", "payment_disbursed:2")
	b.Expires = t0.Add(3 * time.Minute)
	mustClaim(t, s, b, t0.Add(2*time.Minute), true)
	if err := s.Done(t.Context(), a); !errors.Is(err, webhook.ErrClaimLost) {
		t.Errorf("Done of a claim partly taken over: %v, want ErrClaimLost", err)
	}
	if got := handed(t, s, 8); len(got) != 0 {
		t.Errorf("after a lost Done: Handed = %v, want nothing", got)
	}
}

func finishedAndMark(t *testing.T, s webhook.Store) {
	ctx := t.Context()
	if _, ok, err := s.Mark(ctx); err != nil || ok {
		t.Fatalf("fresh store: Mark ok=%v err=%v", ok, err)
	}
	for _, id := range []int64{3, 1, 2} {
		mustClaim(t, s, claim(id, "a", "create"), t0, true)
	}
	if err := s.Finish(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, 9); err != nil { // unknown: known as finished from now on
		t.Fatal(err)
	}
	// Track adds unknown transactions as unfinished and leaves finished ones finished.
	many := []int64{9, 2, 5, 5}
	for id := int64(1000); id < 1700; id++ { // more than one INSERT's worth
		many = append(many, id)
	}
	if err := s.Track(ctx, many); err != nil {
		t.Fatal(err)
	}
	if err := s.Track(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for id := int64(1000); id < 1700; id++ {
		if err := s.Finish(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := s.Unfinished(ctx)
	if err != nil || !slices.Equal(ids, []int64{1, 3, 5}) {
		t.Errorf("Unfinished = %v, %v; want [1 3 5]", ids, err)
	}
	for _, m := range []int64{0, 40, 30} {
		if err := s.AdvanceMark(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if m, ok, err := s.Mark(ctx); err != nil || !ok || m != 40 {
		t.Errorf("Mark = %d %v %v, want 40 (never lowered)", m, ok, err)
	}
}

// concurrentClaims: many owners race for the same facts; exactly one wins each round.
func concurrentClaims(t *testing.T, s webhook.Store) {
	const owners, rounds = 8, 10
	for r := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for o := range owners {
			wg.Go(func() {
				c := claim(100+int64(r), fmt.Sprint("o", o), "ship:1", "ship:2")
				ok, err := s.Claim(context.WithoutCancel(t.Context()), c, t0)
				if err != nil {
					t.Error(err)
					return
				}
				if ok {
					if err := s.Done(t.Context(), c); err != nil {
						t.Error(err)
					}
					mu.Lock()
					won++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if won != 1 {
			t.Fatalf("round %d: %d owners won the same claim", r, won)
		}
	}
}
