package webhook

// Stats are a Handler's counters since it was made.
type Stats struct {
	// Refused counts deliveries refused for want of a valid secret in their URL
	// (Options.Secrets); they cost nothing else.
	Refused int64
	// UnseenDropped counts never-seen ids dropped past MaxUnseen before their
	// confirming fetch.
	UnseenDropped int64
	// NotFoundDropped counts deliveries dropped without a fetch because the API answered
	// 404 or 403 for their id lately.
	NotFoundDropped int64
}

// Stats returns the handler's counters.
func (h *Handler) Stats() Stats {
	h.mu.Lock()
	s := h.stats
	h.mu.Unlock()
	s.Refused = h.door.refused.Load()
	return s
}
