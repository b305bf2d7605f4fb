package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// Listen calls f for every PostgreSQL notification on channel until ctx
// ends, on a connection of its own, redialled a second after it fails. On
// SQLite, which has no notifications, it returns at once.
func (db *DB) Listen(ctx context.Context, channel string, f func()) {
	if db.dialect != Postgres {
		return
	}
	for ctx.Err() == nil {
		db.listenOnce(ctx, channel, f)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (db *DB) listenOnce(ctx context.Context, channel string, f func()) {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return
		}
		f()
	}
}
