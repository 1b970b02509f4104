package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/escrowkit/escrow-go/webhook"
)

var _ webhook.Settings = (*Store)(nil)

// The settings table is created on first use rather than by a schema migration: it is
// additive, and stores of the current schema version gain it without an upgrade step.
const createSettings = `CREATE TABLE IF NOT EXISTS escrow_webhook_settings (
	name TEXT PRIMARY KEY,
	value TEXT NOT NULL)`

// inSettings runs f in a database transaction in which the settings table exists. On
// PostgreSQL the schema lock serializes replicas creating it at once, which CREATE TABLE
// IF NOT EXISTS alone does not.
func (s *Store) inSettings(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	defer tx.Rollback()
	if s.d == Postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, createSettings); err != nil {
		return fmt.Errorf("sqlstore: creating the settings table: %w", err)
	}
	if err := f(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: %w", err)
	}
	return nil
}

// Setting returns the value kept under key.
func (s *Store) Setting(ctx context.Context, key string) (value string, ok bool, err error) {
	err = s.inSettings(ctx, func(tx *sql.Tx) error {
		switch err := tx.QueryRowContext(ctx, s.q(`SELECT value FROM escrow_webhook_settings WHERE name = ?`), key).Scan(&value); {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return fmt.Errorf("sqlstore: %w", err)
		}
		ok = true
		return nil
	})
	return value, ok, err
}

// InitSetting keeps value under key unless it has one, and returns the value kept, in
// one database transaction.
func (s *Store) InitSetting(ctx context.Context, key, value string) (kept string, err error) {
	err = s.inSettings(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_settings (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO NOTHING`), key, value); err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		if err := tx.QueryRowContext(ctx, s.q(`SELECT value FROM escrow_webhook_settings WHERE name = ?`), key).Scan(&kept); err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		return nil
	})
	return kept, err
}

// PutSetting keeps value under key, replacing any.
func (s *Store) PutSetting(ctx context.Context, key, value string) error {
	return s.inSettings(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO escrow_webhook_settings (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`), key, value); err != nil {
			return fmt.Errorf("sqlstore: %w", err)
		}
		return nil
	})
}
