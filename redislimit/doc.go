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
// # A module of its own
//
// This package is a nested module (github.com/escrowkit/escrow-go/redislimit, its own
// go.mod), the only one that requires go-redis. The escrow-go module requires no cache
// library, so a program that uses the SDK alone has no go-redis in its module graph,
// its go.sum or its version selection; a program that wants shared pacing adds this
// module. See CONTRIBUTING.md, "Modules", for how the modules are developed and tagged
// together.
package redislimit
