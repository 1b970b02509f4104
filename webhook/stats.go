package webhook

// Stats are a Handler's counters since it was made.
type Stats struct {
	// Refused counts deliveries refused for want of a valid secret in their URL
	// (Options.Secrets); they cost nothing else.
	Refused int64
	// UnseenDropped counts never-seen ids dropped unconfirmed: those owed a look are
	// kept as ranges of ids, up to 100,000 ranges (1.6 MB); past that the range farthest
	// from the account's newest transaction goes. Ids handed out in order keep a real
	// burst in few ranges, so this stays 0 for real ids.
	UnseenDropped int64
	// NotFoundDropped counts deliveries dropped without a fetch because the API answered
	// 404 or 403 for their id lately.
	NotFoundDropped int64
}

// Stats returns the handler's counters.
func (h *Handler) Stats() Stats {
	h.sched.mu.Lock()
	s := h.sched.stats
	h.sched.mu.Unlock()
	s.Refused = h.door.refused.Load()
	return s
}
