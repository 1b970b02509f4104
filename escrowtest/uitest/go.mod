module github.com/escrowkit/escrow-go/escrowtest/uitest

go 1.25.0

require (
	github.com/chromedp/chromedp v0.23.0
	github.com/escrowkit/escrow-go v0.0.0
)

require (
	github.com/chromedp/cdproto v0.159.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/go-querystring v1.2.0 // indirect
	github.com/hashicorp/go-cleanhttp v0.5.2 // indirect
	github.com/hashicorp/go-retryablehttp v0.7.8 // indirect
	github.com/shopspring/decimal v1.6.0 // indirect
)

replace github.com/escrowkit/escrow-go => ../..
