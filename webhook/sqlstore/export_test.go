package sqlstore

import "time"

// SetTurnWindow sets how long s keeps a turn's grant uncommitted (turn.go), so that a test
// sees a turn open, or committed, whatever the machine's load.
func SetTurnWindow(s *Store, d time.Duration) { s.window = d }

// OpenTurns counts the turns s keeps open, or has not forgotten.
func OpenTurns(s *Store) int {
	s.turns.mu.Lock()
	defer s.turns.mu.Unlock()
	return len(s.turns.m)
}

// SetMaxOwed bounds the ranges s keeps owed a look to n instead of
// webhook.MaxOwedRanges, so that a test fills them quickly.
func SetMaxOwed(s *Store, n int) { s.maxOwed = n }
