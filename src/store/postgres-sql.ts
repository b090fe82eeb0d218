/**
 * The SQL of the PostgreSQL review store that is more than one line: the
 * tables and indexes it creates on first use, and the one-statement claim.
 * `s` is the quoted schema name, checked as an identifier by the store.
 */

/** The states in which a review is active: at most one per run (partial unique index). */
export const ACTIVE = "('resuming', 'uncertain')"

/**
 * The server's clock now, in the ISO form every stored time has
 * (`Date.prototype.toISOString`). Lease times are read from it: every host
 * shares the server, so a lease is judged on one clock whatever each host's
 * clock says. `clock_timestamp()`, not `now()`: the time of the write, not
 * of its transaction's start.
 */
export const PG_NOW = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** The tables and indexes, created if missing; run under one advisory lock per database. */
export function migration(s: string): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    `CREATE TABLE IF NOT EXISTS ${s}.pushary_reviews (
      seq BIGSERIAL NOT NULL,
      decision_id TEXT PRIMARY KEY,
      run_id TEXT NOT NULL,
      target TEXT NOT NULL,
      binding TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('pending', 'resuming', 'completed', 'stale', 'uncertain')),
      reason TEXT,
      created_at TEXT NOT NULL,
      state_changed_at TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS pushary_reviews_run ON ${s}.pushary_reviews (run_id, state)`,
    `CREATE INDEX IF NOT EXISTS pushary_reviews_state ON ${s}.pushary_reviews (state, state_changed_at, seq)`,
    `CREATE UNIQUE INDEX IF NOT EXISTS pushary_reviews_one_active_per_run
      ON ${s}.pushary_reviews (run_id) WHERE state IN ${ACTIVE}`,
    `CREATE TABLE IF NOT EXISTS ${s}.pushary_review_transitions (
      id BIGSERIAL PRIMARY KEY,
      decision_id TEXT NOT NULL,
      from_state TEXT,
      to_state TEXT NOT NULL,
      event TEXT,
      reason TEXT,
      at TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS pushary_review_transitions_decision
      ON ${s}.pushary_review_transitions (decision_id, id)`,
    `CREATE TABLE IF NOT EXISTS ${s}.pushary_review_receipts (
      id BIGSERIAL PRIMARY KEY,
      decision_id TEXT NOT NULL,
      received_at TEXT NOT NULL,
      body TEXT NOT NULL
    )`,
    `CREATE INDEX IF NOT EXISTS pushary_review_receipts_decision ON ${s}.pushary_review_receipts (decision_id, id)`,
    // Added with permits: tables created before them gain the column here.
    // Only when it is missing: ALTER TABLE takes an exclusive lock on the table
    // even when the column exists, and would deadlock with claims of store
    // instances that opened before this one.
    `DO $$ BEGIN
      IF NOT EXISTS (
        SELECT 1 FROM pg_attribute
        WHERE attrelid = '${s.replaceAll("'", "''")}.pushary_reviews'::regclass AND attname = 'permit' AND NOT attisdropped
      ) THEN
        ALTER TABLE ${s}.pushary_reviews ADD COLUMN permit TEXT;
      END IF;
    END $$`,
    // Added with action outcomes, by the same rule.
    `DO $$ BEGIN
      IF NOT EXISTS (
        SELECT 1 FROM pg_attribute
        WHERE attrelid = '${s.replaceAll("'", "''")}.pushary_reviews'::regclass AND attname = 'action' AND NOT attisdropped
      ) THEN
        ALTER TABLE ${s}.pushary_reviews ADD COLUMN action TEXT;
      END IF;
    END $$`,
    // Added with the operator's numbers (review-stats.ts), by the same rule, in one ALTER.
    `DO $$ BEGIN
      IF NOT EXISTS (
        SELECT 1 FROM pg_attribute
        WHERE attrelid = '${s.replaceAll("'", "''")}.pushary_reviews'::regclass AND attname = 'misconfigured_at' AND NOT attisdropped
      ) THEN
        ALTER TABLE ${s}.pushary_reviews ADD COLUMN IF NOT EXISTS answered_at TEXT,
          ADD COLUMN IF NOT EXISTS misconfigured TEXT, ADD COLUMN IF NOT EXISTS misconfigured_at TEXT;
      END IF;
    END $$`,
  ]
}

/**
 * The claim as one statement, one round trip in autocommit: the row read
 * (for the result), the compare-and-set and the history row, timed by the
 * server's clock and returned as `at` (the lease's start). Under READ
 * COMMITTED a concurrent claim of the same row makes the UPDATE wait for it
 * and then re-check `state = $3` against the committed row, so exactly one
 * claim moves it; two claims of different reviews in one run that both pass
 * the NOT EXISTS meet at the partial unique index, which makes the second
 * wait and then fail (23505, reported `busy`). The history row is written by
 * the same statement, so it exists exactly when the state moved. `$6` is the
 * answer time the claimer read (or null); the first one noted is kept.
 */
export function claimStatement(s: string): string {
  return `WITH target AS (
      SELECT run_id, state FROM ${s}.pushary_reviews WHERE decision_id = $1
    ), claimed AS (
      UPDATE ${s}.pushary_reviews SET state = $4, reason = $5, state_changed_at = ${PG_NOW},
        answered_at = coalesce(answered_at, $6::text)
      WHERE decision_id = $1 AND run_id = $2 AND state = $3
        AND NOT EXISTS (SELECT 1 FROM ${s}.pushary_reviews WHERE run_id = $2 AND state IN ${ACTIVE})
      RETURNING decision_id, state_changed_at
    ), logged AS (
      INSERT INTO ${s}.pushary_review_transitions (decision_id, from_state, to_state, event, reason, at)
      SELECT decision_id, $3, $4, 'CLAIM', $5, state_changed_at FROM claimed
    )
    SELECT run_id, state, EXISTS (SELECT 1 FROM claimed) AS claimed,
      (SELECT state_changed_at FROM claimed) AS at FROM target`
}
