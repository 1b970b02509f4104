module github.com/escrowkit/escrow-go/bench

go 1.25.0

require github.com/escrowkit/escrow-go v0.0.0-00010101000000-000000000000

require (
	github.com/escrowkit/escrow-go/redislimit v0.0.0-00010101000000-000000000000
	github.com/escrowkit/escrow-go/webhook/sqlstore v0.0.0-00010101000000-000000000000
	github.com/hashicorp/go-retryablehttp v0.7.8
	github.com/jackc/pgx/v5 v5.12.0
	github.com/redis/go-redis/v9 v9.22.0
	go.uber.org/goleak v1.3.0
	modernc.org/sqlite v1.59.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	github.com/shopspring/decimal v1.6.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	modernc.org/libc v1.75.7 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

// Development and CI build against the modules in this repository (see the README,
// "Modules"); the versions pinned in replace let go.work use the same directories.
replace github.com/escrowkit/escrow-go v0.0.0-00010101000000-000000000000 => ../

replace github.com/escrowkit/escrow-go/redislimit v0.0.0-00010101000000-000000000000 => ../redislimit

replace github.com/escrowkit/escrow-go/webhook/sqlstore v0.0.0-00010101000000-000000000000 => ../webhook/sqlstore
