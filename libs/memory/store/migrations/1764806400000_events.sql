-- Up Migration

-- The source of truth when ENGRAM_EVENT_STORE is a PostgreSQL URL: one row per event, append-only
-- but for purge redactions. seq is global and gap-free (taken from event_position in the inserting
-- transaction); version counts a pool's events, and unique (pool, version) is the optimistic
-- concurrency check: a write decided on version v of a pool inserts v+1 and fails if another
-- replica got there first. The envelope is in the clear; body is the JSON of data, or the sealed
-- string (sealed = true). crc is the CRC-32 of the row as event-row.ts serialises it.
CREATE TABLE events (
  seq bigint PRIMARY KEY,
  pool text NOT NULL,
  version bigint NOT NULL,
  id text NOT NULL UNIQUE,
  type text NOT NULL,
  at text NOT NULL,
  envelope text NOT NULL,
  sealed boolean NOT NULL,
  body text NOT NULL,
  crc text NOT NULL,
  UNIQUE (pool, version)
);

CREATE INDEX events_pool_seq ON events (pool, seq);

-- One row: the last seq handed out (the row lock serialises inserting transactions, so seqs commit
-- in order with no gap), and the highest seq whose jobs some replica has handed to Redis.
CREATE TABLE event_position (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  seq bigint NOT NULL,
  dispatched bigint NOT NULL
);

INSERT INTO event_position (singleton, seq, dispatched) VALUES (true, 0, 0);

-- Down Migration

DROP TABLE event_position;
DROP TABLE events;
