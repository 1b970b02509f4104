package webhook

// A partner's claims (deliveries about a transaction whose last fetch found nothing new,
// such as replays of a real id; of an account not found not to be a partner: the first
// listing tells) are confirmed by its listings by id, a page of them a
// call on the listing's own rate-limit window, instead of a GET each within the claims'
// share: the confirmer asks for it (routeListing) and the scheduler has the next listing
// by id ask about the transaction, with the never-seen ids (up to half of each page
// first, the rest after them). The state listed confirms the names the batch held when it
// was asked; with a name that arrived since, the next listing asks again; a transaction
// the listing did not name (the partner may be a party without being its partner) takes
// a GET within the share.

import escrow "github.com/escrowkit/escrow-go"

// askListing sets a queue whose batch holds a claim aside for the next listing by id.
func (s *scheduler) askListing(id int64, q *txQueue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q.state, q.asked = qListing, len(q.events)
	s.ns.claims = append(s.ns.claims, id)
	s.spawnFor()
}

// takeClaims takes up to n of the transactions whose claims wait for a listing. s.mu
// held.
func (s *scheduler) takeClaims(n int) []int64 {
	n = min(max(n, 0), len(s.ns.claims))
	taken := s.ns.claims[:n:n]
	s.ns.claims = s.ns.claims[n:]
	if len(s.ns.claims) == 0 {
		s.ns.claims = nil
	}
	return taken
}

// claimsAnswered hands a listing's answer to the claims it asked about: a transaction it
// named is confirmed from the state listed, without a fetch, if nothing arrived for it
// since it was asked (else the next listing asks again, with what arrived); one it did
// not name, or all of them when the listing failed or was not made (txs nil), take a GET
// within the claims' share. s.mu held.
func (s *scheduler) claimsAnswered(claimed []int64, txs []escrow.Transaction) {
	for _, id := range claimed {
		q := s.queues[id]
		if q == nil || q.state != qListing || q.b == nil {
			continue
		}
		tx := listedTx(txs, id)
		switch {
		case tx == nil:
			q.b.route = routeListed
		case len(q.events) == q.asked:
			q.b.tx, q.b.fetch, q.b.listed, q.b.route = tx, false, true, routeFetch
		default:
			q.b.route = routeFetch
		}
		s.place(id, q)
	}
}

// listedTx returns the transaction of txs with id, nil if none.
func listedTx(txs []escrow.Transaction, id int64) *escrow.Transaction {
	for i := range txs {
		if txs[i].ID == id {
			return &txs[i]
		}
	}
	return nil
}
