package webhook

// Stats are a Handler's counters since it was made.
type Stats struct {
	// Refused counts deliveries refused for want of a valid secret in their URL
	// (Options.Secrets); they cost nothing else.
	Refused int64
}

// Stats returns the handler's counters.
func (h *Handler) Stats() Stats {
	return Stats{Refused: h.door.refused.Load()}
}
