module github.com/escrowkit/escrow-go/bench

go 1.25.0

require github.com/escrowkit/escrow-go v0.0.0-00010101000000-000000000000

require (
	github.com/escrowkit/escrow-go/redislimit v0.0.0-00010101000000-000000000000
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/redis/go-redis/v9 v9.22.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/shopspring/decimal v1.6.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
)

// Development and CI build against the modules in this repository (see the README,
// "Modules"); the versions pinned in replace let go.work use the same directories.
replace github.com/escrowkit/escrow-go v0.0.0-00010101000000-000000000000 => ../

replace github.com/escrowkit/escrow-go/redislimit v0.0.0-00010101000000-000000000000 => ../redislimit
