package bench

// RunReceive measures the SQL store on both engines, and package sqlstore links no driver
// (the program imports the one it uses), so the benchmarks register both.
import (
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx", for postgres:// stores
	_ "modernc.org/sqlite"             // registers "sqlite"
)
