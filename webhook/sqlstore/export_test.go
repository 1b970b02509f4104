package sqlstore

import "time"

// SetTurnWindow sets how long s keeps a turn's grant uncommitted (turn.go), so that a test
// sees a turn open, or committed, whatever the machine's load.
func SetTurnWindow(s *Store, d time.Duration) { s.window = d }
