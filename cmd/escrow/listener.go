package main

import (
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// serverLimits are what "escrow webhooks listen" allows one connection, so that slow or
// idle connections cannot pile up: each holds a file descriptor, and about 20,000
// exhaust a process's limit.
type serverLimits struct {
	// header: the request line and headers must arrive within it.
	header time.Duration
	// request: the whole request, body included, must arrive within it. The API's sender
	// gives up after 10 s, so a body still arriving after 15 s comes from no real sender.
	request time.Duration
	// write bounds the answer; the handler answers at once.
	write time.Duration
	// idle closes a kept-alive connection that sends no next request.
	idle time.Duration
	// conns caps the connections open at once; more wait in the kernel's backlog.
	conns int
}

// defaultLimits are the listener's: docs/webhooks.md's receiver shows the same http.Server.
var defaultLimits = serverLimits{
	header: 5 * time.Second, request: 15 * time.Second, write: 15 * time.Second,
	idle: 30 * time.Second, conns: 1024,
}

// newServer returns the http.Server of the listener, with lim's timeouts.
func newServer(h http.Handler, lim serverLimits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: lim.header,
		ReadTimeout:       lim.request,
		WriteTimeout:      lim.write,
		IdleTimeout:       lim.idle,
		MaxHeaderBytes:    16 << 10, // a delivery's headers are a few hundred bytes
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
}

// limitListener accepts at most n connections open at once: Accept waits for one of
// them to close (as golang.org/x/net/netutil's LimitListener, without the dependency).
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{} // closed by Close, so that a waiting Accept returns
	once  sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection, which gives the slot back when
// closed.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitedConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close stops accepting.
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitedConn gives its slot back once, on the first Close.
type limitedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
