// Package sqlstore is a durable webhook.Store over database/sql: one implementation for
// two engines, PostgreSQL (driver github.com/jackc/pgx/v5/stdlib) for marketplaces that
// run several replicas of one receiver, and SQLite (modernc.org/sqlite, pure Go, no cgo)
// as the embedded store of one instance that must survive restarts.
//
// It creates and versions its own tables (escrow_webhook_*) when opened, idempotently and
// safely when several replicas start at once, and refuses a schema written by a newer
// version with a *SchemaError (version 1's per-fact claims are upgraded: facts handed
// over stay handed over). A transaction's lease is a row read and written under a row
// lock (SELECT … FOR UPDATE on PostgreSQL; SQLite's transactions hold the write lock), so
// one replica at a time confirms a transaction and two never hand over the same fact; a
// lease whose holder died is taken over once it expires. Taking a lease is one database
// transaction, ending a turn (its facts, whether the transaction finished, the pace) one
// more. Prune turns finished transactions into tombstone rows. The reconciler's
// high-water mark is kept too, so a restarted receiver misses nothing.
//
// # Effectively once
//
// [Store.TxCallback] runs the callback inside a database transaction and records the
// event's facts as handed over in that same transaction. When the callback's side effect
// lives in the same database (an order marked paid, a row in an outbox), the effect and
// the record commit together or not at all: after a crash the event is handed over again
// only if its effect was rolled back, so it takes effect exactly once.
//
// # Why a package of its own, inside the root module
//
// Go compiles and links only the packages a program imports. Keeping the SQL drivers
// behind this package means that programs using only the SDK (package escrow) or only
// package webhook with their own Store never compile pgx or SQLite; package webhook does
// not import them. A nested module (its own go.mod) was weighed and not chosen: the
// escrow CLI needs the drivers, and `go install github.com/escrowkit/escrow-go/cmd/escrow@latest`
// must work, which forbids replace directives and would tie two modules' releases
// together. The cost of one module, stated honestly: the drivers are listed in the root
// go.mod, so they take part in every user's version selection (a user who also requires
// pgx gets at least our version) and `go mod download` without arguments fetches them.
// Module-graph pruning (go 1.17+) keeps the rest cheap: a build that does not import this
// package neither compiles nor downloads the drivers (measured: see package redislimit's
// doc, whose trial module imported escrow and webhook and fetched no driver at all).
package sqlstore
