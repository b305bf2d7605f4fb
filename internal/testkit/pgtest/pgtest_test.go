package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestServer: each test gets its own empty database on a server that does
// not run as root (PostgreSQL refuses to), on loopback.
func TestServer(t *testing.T) {
	ctx := context.Background()
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("two tests share the database %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var super bool
	var addr string
	var tables int
	if err := conn.QueryRow(ctx, `SELECT usesuper, inet_server_addr()::text, (SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public')
		FROM pg_user WHERE usename = current_user`).Scan(&super, &addr, &tables); err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1/32" || tables != 0 {
		t.Errorf("server address %s, %d tables in a new database; want 127.0.0.1/32 and 0", addr, tables)
	}
	if os.Geteuid() == 0 {
		st, err := os.Stat(srv.dir + "/data")
		if err != nil {
			t.Fatal(err)
		}
		if uid := fileUID(st); uid == 0 {
			t.Errorf("the data directory is owned by root")
		}
	}
}
