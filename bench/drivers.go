package bench

import (
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", for RunReceive over PostgreSQL
	_ "modernc.org/sqlite"             // registers "sqlite", for RunReceive over SQLite
)
