package escrowtest

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
)

// TestClientReusesConnectionsOfConcurrentCallers: after 32 callers held a connection each
// at once, 32 more callers at once all get a pooled connection, so none pays a new TLS
// handshake.
func TestClientReusesConnectionsOfConcurrentCallers(t *testing.T) {
	srv := NewServer()
	defer srv.Close()
	const callers = 32
	var reused, fresh atomic.Int64
	round := func() {
		var ready, answered, wg sync.WaitGroup
		ready.Add(callers)
		answered.Add(callers)
		start := make(chan struct{})
		for range callers {
			wg.Go(func() {
				trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
					if info.Reused {
						reused.Add(1)
					} else {
						fresh.Add(1)
					}
				}}
				req, err := http.NewRequestWithContext(httptrace.WithClientTrace(t.Context(), trace), http.MethodGet, srv.URL+"customer/me", nil)
				if err != nil {
					t.Error(err)
					ready.Done()
					return
				}
				ready.Done()
				<-start
				resp, err := srv.Client().Do(req)
				answered.Done()
				if err != nil {
					t.Error(err)
					return
				}
				answered.Wait() // every caller holds its connection until all have answers
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		ready.Wait()
		close(start)
		wg.Wait()
	}
	round()
	reused.Store(0)
	fresh.Store(0)
	round()
	if fresh.Load() != 0 || reused.Load() != callers {
		t.Errorf("second round of %d concurrent calls: %d reused a connection, %d opened a new one; want all reused", callers, reused.Load(), fresh.Load())
	}
}
