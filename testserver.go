package escrow

import "net/http"

// TestServer is a local server of the API, such as escrowtest's emulator: its base URL
// (with the version segment and a trailing slash) and an HTTP client that trusts its
// certificate. *escrowtest.Server implements it.
type TestServer interface {
	BaseURL() string
	Client() *http.Client
}

// WithEmulator points the client at a local server of the API, such as an
// escrowtest.Server, and trusts its certificate: one line gives a test an SDK client for
// an emulator account.
//
//	buyer := srv.AddCustomer("buyer@example.com")
//	client, err := escrow.NewClient(buyer.Email, buyer.APIKey, escrow.WithEmulator(srv))
func WithEmulator(srv TestServer) Option {
	return func(s *settings) {
		s.baseURL = srv.BaseURL()
		s.httpClient = srv.Client()
	}
}
