/** The projection's schema. The seed's `memories` columns, plus source/supersession, FTS5 and checkpoints. */
export const SCHEMA_VERSION = 1;

export const SCHEMA_SQL = `
CREATE TABLE IF NOT EXISTS memories (
  id TEXT PRIMARY KEY,
  pool TEXT NOT NULL,
  type TEXT NOT NULL,
  category TEXT,
  content TEXT NOT NULL,
  confidence REAL NOT NULL DEFAULT 1.0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_referenced TEXT,
  reference_count INTEGER NOT NULL DEFAULT 0,
  is_confirmed INTEGER NOT NULL DEFAULT 0,
  is_archived INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL,
  superseded_by TEXT,
  supersedes TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS memories_by_pool ON memories (pool, is_archived, created_at);
CREATE INDEX IF NOT EXISTS memories_by_confidence ON memories (pool, is_archived, confidence);
-- A pool's entries in the order they were written (rowid follows the key), for a search match's neighbours.
CREATE INDEX IF NOT EXISTS memories_in_pool_order ON memories (pool);

CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
  content, content='memories', content_rowid='rowid', tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS memories_fts_insert AFTER INSERT ON memories BEGIN
  INSERT INTO memories_fts (rowid, content) VALUES (new.rowid, new.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_delete AFTER DELETE ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
END;
CREATE TRIGGER IF NOT EXISTS memories_fts_update AFTER UPDATE OF content ON memories BEGIN
  INSERT INTO memories_fts (memories_fts, rowid, content) VALUES ('delete', old.rowid, old.content);
  INSERT INTO memories_fts (rowid, content) VALUES (new.rowid, new.content);
END;

-- Last seq that touched each pool: the version of the pool's Tier 1 block.
CREATE TABLE IF NOT EXISTS pools (pool TEXT PRIMARY KEY, last_seq INTEGER NOT NULL);

-- last_seq: last event applied. dispatched_seq: outbox cursor (last event turned into jobs).
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta (key, value) VALUES ('last_seq', 0), ('dispatched_seq', 0), ('schema_version', ${SCHEMA_VERSION});
`;
