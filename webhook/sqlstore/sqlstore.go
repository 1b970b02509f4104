package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/escrowkit/escrow-go/webhook"
)

// Dialect is the SQL engine behind a Store.
type Dialect int

// The engines a Store runs on.
const (
	Postgres Dialect = iota + 1
	SQLite
)

func (d Dialect) String() string {
	switch d {
	case Postgres:
		return "postgres"
	case SQLite:
		return "sqlite"
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

// SchemaVersion is the version of the tables this package writes.
const SchemaVersion = 3

// ErrDSN matches every error about a data source name that Open cannot use.
var ErrDSN = errors.New("sqlstore: invalid store DSN")

// ErrNoDriver matches the error of Open when the program has not registered the driver
// its DSN needs: the program imports it (see the package doc).
var ErrNoDriver = errors.New("sqlstore: the store's database/sql driver is not registered")

// driverImports names the package that registers each driver Open uses.
var driverImports = map[string]string{
	"pgx":    "github.com/jackc/pgx/v5/stdlib",
	"sqlite": "modernc.org/sqlite",
}

// ErrNewerSchema matches a *SchemaError.
var ErrNewerSchema = errors.New("sqlstore: the store's schema is newer than this program")

// SchemaError says the database holds a schema this version cannot use; nothing in it
// was changed.
type SchemaError struct {
	Found, Supported int
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("sqlstore: the store's schema is version %d, newer than this program understands (%d): upgrade escrow-go; nothing was changed", e.Found, e.Supported)
}

// Is matches ErrNewerSchema.
func (e *SchemaError) Is(target error) bool { return target == ErrNewerSchema }

// Store is a webhook.Store in a SQL database. It is safe for concurrent use, by several
// goroutines and, on PostgreSQL, by several processes.
type Store struct {
	db     *sql.DB
	d      Dialect
	own    bool // Close closes db
	turns  openTurns
	window time.Duration // how long a turn's grant may stay uncommitted (turn.go); 0: never
	// maxOwed bounds the rows of ids owed a look (owed.go): webhook.MaxOwedRanges if 0;
	// tests set fewer.
	maxOwed int
}

var _ webhook.Store = (*Store)(nil)

// Open connects to the store a DSN names, checks that it answers, and creates or
// upgrades its tables:
//
//	sqlite:PATH                       a SQLite file, created if missing
//	postgres://user:pass@host/db?...  PostgreSQL (also postgresql://), as pgx reads it
//
// The program registers the engine's driver by importing it (import _
// "modernc.org/sqlite", or _ "github.com/jackc/pgx/v5/stdlib"); without it Open returns
// an error matching ErrNoDriver. An unusable DSN is an error matching ErrDSN; a server that
// cannot be reached before ctx ends is an error too. Close the Store when done.
//
// A SQLite file that Open creates is readable and writable by its owner alone (0600; a
// umask can only take more away), and so are its -wal and -shm files, to which SQLite gives the
// database file's mode: the store holds what the Handler records, and a program's own
// settings (the CLI's delivery secret). A file that exists keeps its mode.
func Open(ctx context.Context, dsn string) (*Store, error) {
	db, d, err := openDB(ctx, dsn)
	if err != nil {
		return nil, err
	}
	s, err := New(ctx, db, d)
	if err != nil {
		db.Close()
		return nil, err
	}
	s.own = true
	// database/sql keeps 2 idle connections by default: a Handler's workers would open
	// and close a connection (a PostgreSQL backend) for most statements.
	conns := idleConns
	if d == Postgres {
		conns = PostgresConns
		db.SetMaxOpenConns(conns)
	}
	db.SetMaxIdleConns(conns)
	return s, nil
}

// openDB opens the database dsn names, a SQLite file created private to its owner, and
// connects to it once.
func openDB(ctx context.Context, dsn string) (db *sql.DB, d Dialect, err error) {
	driver, source, d, err := parseDSN(dsn)
	if err != nil {
		return nil, d, err
	}
	if err := needDriver(driver, d, sql.Drivers()); err != nil {
		return nil, d, err
	}
	if d == SQLite {
		if err := createPrivate(sqliteFile(sqlitePath(dsn))); err != nil {
			return nil, d, fmt.Errorf("sqlstore: connecting to the %s store: %w", d, err)
		}
	}
	if db, err = sql.Open(driver, source); err != nil {
		return nil, d, fmt.Errorf("%w: %v", ErrDSN, err)
	}
	if err := connect(ctx, db, d); err != nil {
		db.Close()
		return nil, d, connectError(d, err)
	}
	return db, d, nil
}

// connectError is the error of a first connection that failed: ErrDSN when the driver
// could not read the DSN's settings.
func connectError(d Dialect, err error) error {
	if unparsedDSN(err) {
		return fmt.Errorf("%w: %w", ErrDSN, err)
	}
	return fmt.Errorf("sqlstore: connecting to the %s store: %w", d, err)
}

// idleConns is how many idle connections a SQLite Store that Open made keeps: a
// Handler's default 8 workers and its reconciler, with room to spare.
const idleConns = 16

// PostgresConns is how many connections a PostgreSQL Store that Open made uses at most,
// each kept open once made ("Connections" in the package doc). Change it with
// Store.DB().SetMaxOpenConns and SetMaxIdleConns.
const PostgresConns = 4

// needDriver says which import is missing when driver is not among the registered ones.
func needDriver(driver string, d Dialect, registered []string) error {
	if slices.Contains(registered, driver) {
		return nil
	}
	return fmt.Errorf("%w: the %s store needs driver %q: import _ %q in the program", ErrNoDriver, d, driver, driverImports[driver])
}

// unparsedDSN reports the error pgx gives, at the first connection, for a postgres:// URL
// whose settings it cannot read (a port out of range, an unknown sslmode, a timeout that is
// no number): a *pgconn.ParseConfigError, known by its type's name since this package
// links no driver. Retrying such a DSN cannot help, so Open reports it as ErrDSN.
func unparsedDSN(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if fmt.Sprintf("%T", err) == "*pgconn.ParseConfigError" {
			return true
		}
	}
	return false
}

// parseDSN turns a store DSN into a driver name and its data source.
func parseDSN(dsn string) (driver, source string, d Dialect, err error) {
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		path := sqlitePath(dsn)
		if path == "" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "//") {
			return "", "", 0, fmt.Errorf("%w: want sqlite:PATH with a file path without '?' or '#', got %q", ErrDSN, dsn)
		}
		// WAL lets readers go on while one writer writes; immediate transactions take the
		// write lock up front and wait for it (busy_timeout) instead of failing midway.
		return "sqlite", "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate", SQLite, nil
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		u, perr := url.Parse(dsn)
		if perr != nil || u.Host == "" {
			return "", "", 0, fmt.Errorf("%w: %q is not a postgres:// URL with a host", ErrDSN, redact(dsn))
		}
		return "pgx", dsn, Postgres, nil
	}
	return "", "", 0, fmt.Errorf("%w: %q: want sqlite:PATH or a postgres:// URL", ErrDSN, redact(dsn))
}

// sqlitePath is the PATH of a sqlite:PATH DSN, which the SQLite source names as the
// "file:" URI's path.
func sqlitePath(dsn string) string { return strings.TrimPrefix(dsn, "sqlite:") }

// sqliteFile is the file SQLite opens for path, the path of a "file:" URI: SQLite decodes
// each %HH in it, copies any other character as it is, and ends the path at a %00. It is
// "" for :memory:, a database without a file.
func sqliteFile(path string) string {
	if path == ":memory:" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '%' && i+2 < len(path) && isHex(path[i+1]) && isHex(path[i+2]) {
			n, _ := strconv.ParseUint(path[i+1:i+3], 16, 8)
			if n == 0 {
				break
			}
			c = byte(n)
			i += 2
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// createPrivate creates the database file name (none: "") for its owner alone, if it
// does not exist, before SQLite opens it: SQLite would create it, and then its -wal and
// -shm, with the umask's mode (commonly 0644, readable by every local user).
func createPrivate(name string) error {
	if name == "" {
		return nil
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil // its owner chose its mode; SQLite gives its -wal and -shm the same
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// redact hides a password in a DSN that is quoted in an error.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	if i := strings.LastIndex(dsn, "@"); i >= 0 {
		return "…" + dsn[i:]
	}
	return dsn
}

// connect opens the first connection. Switching a new SQLite file to WAL takes a lock
// that SQLite's busy handler does not wait for, so replicas opening one file at once can
// be refused with SQLITE_BUSY while connecting; that is retried with a growing wait for as
// long as busy_timeout would have waited, or until ctx ends. Any other error is final.
func connect(ctx context.Context, db *sql.DB, d Dialect) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		err := db.PingContext(ctx)
		if err == nil || d != SQLite || !sqliteBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// sqliteBusy reports SQLITE_BUSY (primary code 5) from the modernc driver, whose errors
// carry their result code.
func sqliteBusy(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == 5
}

// New makes a Store of a database the caller opened (with the "pgx" or the "sqlite"
// driver), creating or upgrading its tables. Close does not close db. With SQLite, open
// it with _txlock=immediate and a busy_timeout, as Open does, when several goroutines
// write.
func New(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	if d != Postgres && d != SQLite {
		return nil, fmt.Errorf("sqlstore: unknown dialect %v", d)
	}
	s := &Store{db: db, d: d, window: turnWindow}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// DB returns the database the store writes to.
func (s *Store) DB() *sql.DB { return s.db }

// MaxConns is how many connections the store's *sql.DB opens at most (0: no bound): a
// webhook.Handler over the store runs that many workers unless its Options.Workers is
// set (webhook.Pooled), so Store.DB().SetMaxOpenConns sizes a replica's capacity alone.
func (s *Store) MaxConns() int { return s.db.Stats().MaxOpenConnections }

// Dialect returns the store's engine.
func (s *Store) Dialect() Dialect { return s.d }

// Close rolls back the turns still open (their leases are free again, as when a
// process dies) and closes the database if Open opened it.
func (s *Store) Close() error {
	s.closeTurns()
	if s.own {
		return s.db.Close()
	}
	return nil
}

// migrations[v] takes the schema from version v to v+1.
var migrations = [][]string{
	{
		`CREATE TABLE IF NOT EXISTS escrow_webhook_transactions (
			transaction_id BIGINT PRIMARY KEY,
			finished INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE IF NOT EXISTS escrow_webhook_facts (
			transaction_id BIGINT NOT NULL,
			fact TEXT NOT NULL,
			owner TEXT NOT NULL,
			expires BIGINT NOT NULL,
			done INTEGER NOT NULL DEFAULT 0,
			PRIMARY KEY (transaction_id, fact))`,
		`CREATE INDEX IF NOT EXISTS escrow_webhook_unfinished ON escrow_webhook_transactions (finished, transaction_id)`,
		`CREATE TABLE IF NOT EXISTS escrow_webhook_mark (
			id INTEGER PRIMARY KEY,
			mark BIGINT NOT NULL)`,
	},
	{
		// Leases replace per-fact claims: a fact row is written once, done. finished is
		// 0 (unfinished), 1 (finished at finished_at, ms) or 2 (pruned: a tombstone).
		`DELETE FROM escrow_webhook_facts WHERE done = 0`,
		`ALTER TABLE escrow_webhook_transactions ADD COLUMN finished_at BIGINT NOT NULL DEFAULT 0`,
		`CREATE INDEX IF NOT EXISTS escrow_webhook_finished_at ON escrow_webhook_transactions (finished, finished_at)`,
		`CREATE TABLE IF NOT EXISTS escrow_webhook_leases (
			transaction_id BIGINT PRIMARY KEY,
			holder TEXT NOT NULL DEFAULT '',
			expires BIGINT NOT NULL DEFAULT 0,
			marks BIGINT NOT NULL DEFAULT 0,
			pending TEXT NOT NULL DEFAULT '',
			not_before BIGINT NOT NULL DEFAULT 0,
			hold BIGINT NOT NULL DEFAULT 0,
			tried TEXT NOT NULL DEFAULT '')`,
	},
	{
		// Ids owed a look (owed.go): ranges, and the count of them, whose row serializes
		// the writers.
		`CREATE TABLE IF NOT EXISTS escrow_webhook_owed (
			lo BIGINT PRIMARY KEY,
			hi BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS escrow_webhook_owed_count (
			id INTEGER PRIMARY KEY,
			ranges BIGINT NOT NULL)`,
		`INSERT INTO escrow_webhook_owed_count (id, ranges) VALUES (1, 0) ON CONFLICT (id) DO NOTHING`,
	},
}

// schemaLock is the PostgreSQL advisory lock that serializes replicas creating the schema.
const schemaLock = 0x65736372_6f77 // "escrow"

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: creating the schema: %w", err)
	}
	defer tx.Rollback()
	v, err := s.schemaVersion(ctx, tx)
	switch {
	case err != nil:
		return err
	case v > SchemaVersion:
		return &SchemaError{Found: v, Supported: SchemaVersion}
	case v == SchemaVersion:
		return nil
	}
	if err := s.upgrade(ctx, tx, v); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: creating the schema: %w", err)
	}
	return nil
}

// schemaVersion reads the schema's version, 0 for a database without one, creating the
// table that records it; on PostgreSQL it first takes the schema lock for the rest of tx.
func (s *Store) schemaVersion(ctx context.Context, tx *sql.Tx) (int, error) {
	if s.d == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return 0, fmt.Errorf("sqlstore: creating the schema: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS escrow_webhook_schema (id INTEGER PRIMARY KEY, version INTEGER NOT NULL)`); err != nil {
		return 0, fmt.Errorf("sqlstore: creating the schema: %w", err)
	}
	var v int
	switch err := tx.QueryRowContext(ctx, `SELECT version FROM escrow_webhook_schema WHERE id = 1`).Scan(&v); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("sqlstore: reading the schema version: %w", err)
	}
	return v, nil
}

// upgrade runs the migrations from version v to SchemaVersion and records the version.
func (s *Store) upgrade(ctx context.Context, tx *sql.Tx, v int) error {
	for ; v < SchemaVersion; v++ {
		for _, stmt := range migrations[v] {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("sqlstore: upgrading the schema to version %d: %w", v+1, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_schema (id, version) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET version = excluded.version`), SchemaVersion); err != nil {
		return fmt.Errorf("sqlstore: recording the schema version: %w", err)
	}
	return nil
}

// q rewrites a query's ? placeholders for the dialect ($1, $2, … for PostgreSQL). The
// queries of this package hold no ? inside literals.
func (s *Store) q(query string) string {
	if s.d != Postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Handed returns the keys of the transaction's facts recorded as done.
func (s *Store) Handed(ctx context.Context, transactionID int64) (map[string]bool, error) {
	return s.handed(ctx, s.db, transactionID)
}

// querier is a *sql.DB or a *sql.Tx.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) handed(ctx context.Context, q querier, transactionID int64) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, s.q(`SELECT fact FROM escrow_webhook_facts WHERE transaction_id = ? AND done = 1`), transactionID)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	defer rows.Close()
	out := make(map[string]bool)
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("sqlstore: %w", err)
		}
		out[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	return out, nil
}

// trackChunk bounds the rows of one INSERT of Track.
const trackChunk = 500

// Track makes the transactions known as unfinished, those not known yet, in one database
// transaction.
func (s *Store) Track(ctx context.Context, transactionIDs []int64) error {
	if len(transactionIDs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	defer tx.Rollback()
	for ids := range slices.Chunk(slices.Sorted(slices.Values(transactionIDs)), trackChunk) {
		args := make([]any, len(ids))
		for i, id := range ids {
			args[i] = id
		}
		values := strings.TrimSuffix(strings.Repeat("(?, 0), ", len(ids)), ", ")
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_transactions (transaction_id, finished) VALUES `+values+`
			ON CONFLICT (transaction_id) DO NOTHING`), args...); err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// Finish marks the transaction finished, stamped with the time now; a pruned one stays
// pruned.
func (s *Store) Finish(ctx context.Context, transactionID int64) error {
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_transactions (transaction_id, finished, finished_at) VALUES (?, 1, ?)
		ON CONFLICT (transaction_id) DO UPDATE SET finished = 1, finished_at = excluded.finished_at
		WHERE escrow_webhook_transactions.finished = 0`), transactionID, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// Unfinished lists the known transactions not finished, by id.
func (s *Store) Unfinished(ctx context.Context) ([]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT transaction_id FROM escrow_webhook_transactions WHERE finished = 0 ORDER BY transaction_id`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlstore: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: %w", err)
	}
	return ids, nil
}

// Mark returns the reconciler's mark.
func (s *Store) Mark(ctx context.Context) (int64, bool, error) {
	var m int64
	switch err := s.db.QueryRowContext(ctx, `SELECT mark FROM escrow_webhook_mark WHERE id = 1`).Scan(&m); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("sqlstore: %w", err)
	}
	return m, true, nil
}

// AdvanceMark raises the mark to id, never lowers it.
func (s *Store) AdvanceMark(ctx context.Context, id int64) error {
	if _, err := s.db.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_mark (id, mark) VALUES (1, ?)
		ON CONFLICT (id) DO UPDATE SET mark = excluded.mark WHERE escrow_webhook_mark.mark < excluded.mark`), id); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// TxFunc is a callback that makes its side effects through tx, the database transaction
// in which the event's facts are recorded as handed over. It must not commit or roll
// back tx, nor use the Store's database outside tx, nor call the Store's methods: on
// SQLite that would wait for the write lock tx holds, and on PostgreSQL for one of the
// Store's connections (at most PostgresConns), which callbacks holding the others may
// wait for too, or for the turn tx belongs to, which waits for fn.
type TxFunc func(ctx context.Context, tx *sql.Tx, ev webhook.ConfirmedEvent) error

// TxCallback returns a webhook.Callback that runs fn in a transaction of the store's
// database and records the event's facts as done in that same transaction: the side
// effects fn makes through tx and the record commit together or not at all. On
// PostgreSQL that transaction is the turn's own while it is open (under a savepoint, so
// that fn's failure undoes fn alone): the effects commit with the turn's end, one commit
// for the turn, and a turn whose end fails undoes them with its record, and the Handler
// hands the events over again (webhook.ErrTurnUndone). Otherwise (SQLite, or a turn
// past its window) it is a transaction of its own. If the transaction's lease was taken
// over by another replica meanwhile (the turn outlived ClaimLease), everything is rolled
// back and the error matches webhook.ErrClaimLost.
func (s *Store) TxCallback(fn TxFunc) webhook.Callback {
	return func(ctx context.Context, ev webhook.ConfirmedEvent) error {
		handOver := func(tx *sql.Tx) error {
			if err := fn(ctx, tx, ev); err != nil {
				return err
			}
			return s.done(ctx, tx, ev.Claim)
		}
		if joined, err := s.inTurn(ctx, ev.Claim.TransactionID, ev.Claim.Owner, handOver); joined {
			return err
		}
		// Another handler's open turn of this process, if any, is committed first: its
		// lease row is waited on below.
		s.settle(ev.Claim.TransactionID)
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		defer tx.Rollback()
		if err := handOver(tx); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		return nil
	}
}

// done records c's facts as done within tx, and fails with ErrClaimLost unless c.Owner
// still holds the transaction's lease and none of the facts was recorded before. The
// lease's row stays locked until tx ends, so it cannot be taken over in between.
func (s *Store) done(ctx context.Context, tx *sql.Tx, c webhook.Claim) error {
	var holder string
	switch err := tx.QueryRowContext(ctx, s.q(`SELECT holder FROM escrow_webhook_leases WHERE transaction_id = ?`+s.forUpdate()), c.TransactionID).Scan(&holder); {
	case errors.Is(err, sql.ErrNoRows):
		return webhook.ErrClaimLost
	case err != nil:
		return fmt.Errorf("sqlstore: %w", err)
	}
	if holder != c.Owner {
		return webhook.ErrClaimLost
	}
	n, err := s.recordFacts(ctx, tx, c.TransactionID, c.Owner, c.Facts)
	if err != nil {
		return err
	}
	if n != int64(len(c.Facts)) {
		return webhook.ErrClaimLost
	}
	return nil
}
