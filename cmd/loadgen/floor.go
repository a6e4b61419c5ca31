package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// floor is what the database costs at the least, measured on one dedicated
// connection: a bare SELECT 1 round trip, and a single-row durable insert
// (autocommit, synchronous_commit on: the commit waits for the WAL flush).
type floor struct {
	select1, insert summary
}

// floorProbe holds the connection the floor is measured on.
type floorProbe struct {
	conn *sql.Conn
}

func newFloorProbe(ctx context.Context, db *sql.DB) (*floorProbe, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	for _, stmt := range []string{
		`SET synchronous_commit = on`,
		`CREATE TABLE IF NOT EXISTS load_floor (id bigserial PRIMARY KEY, at timestamptz NOT NULL)`,
	} {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			conn.Close()
			return nil, fmt.Errorf("floor: %s: %w", stmt, err)
		}
	}
	return &floorProbe{conn: conn}, nil
}

// measure takes selects SELECT 1 round trips and inserts durable inserts.
// Neither statement has parameters, so lib/pq sends each as one simple
// query: one round trip.
func (p *floorProbe) measure(ctx context.Context, selects, inserts int) (floor, error) {
	var f floor
	var err error
	if f.select1, err = p.repeat(ctx, selects, p.selectOne); err != nil {
		return f, err
	}
	f.insert, err = p.repeat(ctx, inserts, p.durableInsert)
	return f, err
}

func (p *floorProbe) repeat(ctx context.Context, n int, once func(context.Context) (time.Duration, error)) (summary, error) {
	samples := make(latencies, n)
	for i := range samples {
		took, err := once(ctx)
		if err != nil {
			return summary{}, err
		}
		samples[i] = took
	}
	return summarize(samples), nil
}

func (p *floorProbe) selectOne(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	var one int
	if err := p.conn.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return 0, fmt.Errorf("floor: SELECT 1: %w", err)
	}
	return time.Since(start), nil
}

func (p *floorProbe) durableInsert(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if _, err := p.conn.ExecContext(ctx, `INSERT INTO load_floor (at) VALUES (now())`); err != nil {
		return 0, fmt.Errorf("floor: durable insert: %w", err)
	}
	return time.Since(start), nil
}

// Names of the floor probes taken while the load runs.
const (
	opSelect1UnderLoad = "SELECT 1, under load"
	opInsertUnderLoad  = "durable insert, under load"
)

// sampleUnderLoad takes a SELECT 1 and a durable insert every interval
// until ctx ends, recording them like operations: the floor as the loaded
// machine offers it.
func (p *floorProbe) sampleUnderLoad(ctx context.Context, rec *recorder, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	// A query cancelled midway costs database/sql the connection; let the
	// last one finish instead.
	done, ctx := ctx.Done(), context.WithoutCancel(ctx)
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		if took, err := p.selectOne(ctx); err == nil {
			rec.add(opSelect1UnderLoad, took)
		}
		if took, err := p.durableInsert(ctx); err == nil {
			rec.add(opInsertUnderLoad, took)
		}
	}
}

func (p *floorProbe) close() error { return p.conn.Close() }
