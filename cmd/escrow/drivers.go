package main

// The CLI's `webhooks listen --store` accepts either engine, so it registers both drivers;
// package sqlstore links none itself (see its doc).
import (
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", for --store postgres://…
	_ "modernc.org/sqlite"             // registers "sqlite", for --store sqlite:PATH
)
