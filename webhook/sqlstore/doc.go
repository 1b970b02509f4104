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
// lease whose holder died is taken over once it expires. Prune turns finished
// transactions into tombstone rows. The reconciler's high-water mark is kept too, so a
// restarted receiver misses nothing, and so are the never-seen ids owed a look
// (webhook.Store.Owe): rows of ranges of ids, at most webhook.MaxOwedRanges, which a call
// reads around its ids or around near by the primary key, never all of them (on a table
// full of forged ids, 100 ids owed or settled in one database transaction, and the 100
// nearest read in one statement, cost about a millisecond; BenchmarkOwed).
//
// # A turn is one commit on PostgreSQL
//
// On SQLite taking a lease is one database transaction and ending the turn (its facts,
// whether the transaction finished, the pace) one more: SQLite's write lock covers the
// whole database, so no transaction may stay open across a fetch. On PostgreSQL the
// transaction that takes the lease stays open for the turn, and its end records the facts
// and frees the lease in it: one commit a turn. The lease row's lock keeps the other
// replicas out meanwhile: a delivery for the transaction at another replica waits for the
// turn's end (a fetch and its callbacks, tens of milliseconds), and then usually finds
// its name a replay of what the turn recorded, answered with a read. A turn that lasts
// longer than 200 ms (a retry's backoff, a slow answer) has its grant committed then and
// goes on as a committed lease, to which other replicas leave their names without
// waiting; so does one another Handler on the same Store meets. A holder whose process
// dies, or whose connection the server loses, mid-turn leaves the lease free at once: the
// server rolls the grant back. Its hand-overs not yet recorded are confirmed again by the
// next holder, as after a crash of a holder whose lease had to expire first.
//
// # Connections
//
// What a PostgreSQL server spends per fact grows with how many of the receivers'
// transactions run at once, far more than with how many replicas there are: on the 2-core
// machine of BENCHMARKS.md, section 8, one replica whose 32 workers each had a connection
// caught up at a quarter of the rate of one with 8, the server spending four to six times
// the processor time per fact, and four replicas with 8 connections each caught up at
// three quarters of the rate of four with 2. So a Store that Open made uses at most
// [PostgresConns] (4) connections, kept open: the Handler's workers queue for one instead
// of crowding the server. An open turn holds its connection until it ends, through its
// fetch, 200 ms at most, so with four turns under way a fifth waits for a connection, and
// a replica's turns a second are at most its connections over the API's latency: with the
// API 100 ms away, 40 (catching up, about 300 facts a second). The live API's rate limit
// allows about 15 fetches a second, fewer even at 200 ms a turn (20); an account whose
// limit was raised past that gives each replica more connections. Size the total to the
// server: replicas × connections about two to four times its cores;
// Store.DB().SetMaxOpenConns(n) and SetMaxIdleConns(n) change a Store's share (a Store
// made by [New] uses the caller's *sql.DB as it is), and with it the Handler's workers,
// which follow the store's connections ([Store.MaxConns]) unless Options.Workers is set:
// one knob sizes a replica. With the API 100 ms away, 4 connections catch up at about
// 300 facts a second; the rate grows with the connections, about 2,270 with 32, while the
// database's processor time per fact stays flat. A [Store.TxCallback] holds one for as
// long as its function runs; a plain callback takes one if it uses Store.DB(), while its
// turn may hold another: give the application's own queries a pool of their own, or use
// TxCallback's tx.
//
// # Effectively once
//
// [Store.TxCallback] runs the callback inside a database transaction and records the
// event's facts as handed over in that same transaction. When the callback's side effect
// lives in the same database (an order marked paid, a row in an outbox), the effect and
// the record commit together or not at all: after a crash the event is handed over again
// only if its effect was rolled back, so it takes effect exactly once.
//
// On PostgreSQL that transaction is the turn's own while the turn is open, each callback
// under a savepoint (a callback that fails undoes itself alone): the callbacks' effects
// commit with the turn's end, so a turn costs one commit whatever its callbacks, and
// another connection sees the effects when it sees the facts. A turn whose end fails (or
// whose window's commit does: a deferred constraint of the application's, the connection
// lost) undoes its callbacks' effects with its record; Yield then answers
// webhook.ErrTurnUndone, records nothing, and the Handler takes the lease again and hands
// those events over again. A turn whose transaction breaks under a callback (its
// connection lost) ends there, as if its commit had failed. Past its 200 ms window a
// turn's grant is committed (with the effects so far), and later callbacks run in
// transactions of their own.
//
// # Drivers: the program imports the one it uses
//
// This package links no SQL driver. As with database/sql itself, the program imports the
// driver of its engine, and Open finds it by name:
//
//	import (
//		_ "modernc.org/sqlite" // registers "sqlite", for sqlite:PATH
//		"github.com/escrowkit/escrow-go/webhook/sqlstore"
//	)
//
// or _ "github.com/jackc/pgx/v5/stdlib" (registers "pgx") for postgres:// URLs. So a
// SQLite-only program never compiles pgx, and a PostgreSQL one never compiles SQLite
// (measured: `go version -m` of a program that opens a sqlite: store lists no pgx module,
// and of one that opens a postgres:// store no modernc module). A missing import is an error matching ErrNoDriver, naming the package to import.
// [New] takes a *sql.DB the caller opened with any driver that speaks the Dialect.
//
// Driver subpackages (sqlstore/postgres, sqlstore/sqlite, each importing its driver) were
// weighed: they would catch the missing import at compile time, but every store feature
// would be surfaced three times, Open could no longer accept either engine from one
// flag (the CLI's --store), and the drivers' versions would still be chosen by this
// module rather than by the program. The database/sql custom asks one import line of the
// program, which Go users already write for every database/sql driver.
//
// # A module of its own
//
// The package is a nested module (github.com/escrowkit/escrow-go/webhook/sqlstore, its
// own go.mod), so the escrow-go module requires no database library: a program using the
// SDK or package webhook does not even see pgx or SQLite in its module graph. The drivers
// are required here only by this package's tests; the program's own go.mod chooses their
// versions. See CONTRIBUTING.md, "Modules", for how the modules are developed and
// tagged together.
package sqlstore
