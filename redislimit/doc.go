// Package redislimit keeps an escrow.Client's rate-limit memory in Redis, so that replicas
// calling the API as one account share each endpoint's allowance instead of each spending
// it as if alone:
//
//	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
//	defer rdb.Close()
//	client, err := escrow.NewClient(email, apiKey, escrow.WithRateLimitStore(redislimit.New(rdb)))
//
// Before each attempt a client reserves a request in one round trip (a Lua script run
// atomically on Redis's clock); after it, a second round trip reports the answer. (The
// script goes by its SHA-1: once after Redis has lost its script cache, on a restart, the
// call takes a second round trip to send the script itself.) A window
// that is spent holds every replica until it resets. A reservation whose client dies
// expires after its lease, and every key has a TTL. While Redis is away or slow, each client
// paces on its own memory and takes Redis up again once it answers (see
// escrow.WithRateLimitStore): Redis never fails a call.
//
// It needs Redis 4.0 or later (multi-field HSET; scripts replicated by effects), standalone
// or a Cluster: an endpoint's two keys share one hash tag.
//
// # Why a package, not a module
//
// This package lives in the escrow-go module and is the only code in it that imports
// go-redis. Go compiles only the packages a program imports, so a program that uses the SDK
// alone never compiles go-redis; with module-graph pruning (go 1.17 and later go.mod files)
// it does not download go-redis either, though go-redis appears in escrow-go's go.mod and
// go.sum. Measured on a module that imports escrow and webhook only, with an empty module
// cache: `go mod tidy` fetched nothing of go-redis, pgx or modernc (not even their go.mod
// files), its go.sum names none of them, and its binary lists four dependencies.
//
// A nested module (escrow-go/redislimit with its own go.mod) would keep go-redis out of the
// SDK's go.mod altogether. It was weighed and not chosen: the CLI (cmd/escrow) and the
// benchmarks need the drivers, so the root module would require the nested one, or they
// would need replace directives, which `go install github.com/escrowkit/escrow-go/cmd/escrow@latest`
// refuses; and every release would be two tagged versions kept in step. The cost of the
// choice made: escrow-go's go.mod lists go-redis, so a user's `go mod graph` shows it, and
// a go-redis version escrow-go requires takes part in the user's version selection even when
// the user imports the SDK alone.
package redislimit
