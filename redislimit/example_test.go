package redislimit_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/redis/go-redis/v9"

	escrow "github.com/escrowkit/escrow-go"
	"github.com/escrowkit/escrow-go/redislimit"
)

// Every replica of the marketplace makes its client the same way: the same account, the
// same Redis. Together they spend each endpoint's allowance once. The logger is where a
// replica says that Redis went away, and that it came back.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "redis.internal:6379"})
	defer rdb.Close()

	client, err := escrow.NewClient("checkout@marketplace.example", os.Getenv("ESCROW_API_KEY"),
		escrow.WithSandbox(),
		escrow.WithRateLimitStore(redislimit.New(rdb)),
		escrow.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	tx, err := client.Transactions.Get(context.Background(), 29292)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tx.ID)
}
