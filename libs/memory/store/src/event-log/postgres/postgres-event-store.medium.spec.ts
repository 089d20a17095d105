import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import type { QueryResultRow } from 'pg';
import { EncryptionKey } from '@engram/config';
import { EVENT_SCHEMA_VERSION, type MemoryEvent, type NewEvent } from '@engram/domain';
import { eventually, silentLogger } from '@engram/testing';
import { postgresPerTest } from '../../testing/postgres-per-test.js';
import { plainEventCodec, sealedEventCodec } from '../event-codec.js';
import { EventStoreKeyError, PostgresEventStore, VersionConflict } from './postgres-event-store.js';

const postgres = postgresPerTest();

/** A replica's store: its own copy of the table in its own folder, its bodies sealed with `key` if given. */
async function replica(name: string, pollMs = 50, key: EncryptionKey | null = null): Promise<PostgresEventStore> {
  const { url } = postgres.database;
  const codec = key ? sealedEventCodec(key) : plainEventCodec;
  return postgres.closeAfter(
    await PostgresEventStore.open({ url, mirrorDir: join(postgres.dir, name, 'events'), logger: silentLogger(), pollMs, codec }),
  );
}

const sql = <T extends QueryResultRow>(text: string, values?: unknown[]) => postgres.database.query<T>(text, values);

const stored = (id: string, pool = 'p'): NewEvent => ({
  type: 'memory.stored',
  id: `ev-${id}`,
  at: '2026-01-01T00:00:00.000Z',
  pool,
  actor: 'user',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id, type: 'MEMORY', category: null, content: `content ${id}`, confidence: 1, source: 'user' },
});

describe('PostgreSQL event store', () => {
  it('creates its schema on first start and records the migration, once however many replicas start', async () => {
    await Promise.all([replica('a'), replica('b')]);
    const migrations = await sql<{ name: string }>('SELECT name FROM engram_migrations');
    expect(migrations.map((row) => row.name)).toEqual(['1764806400000_events', '1764892800000_key-check']);
    expect(await sql('SELECT seq, dispatched FROM event_position')).toEqual([{ seq: '0', dispatched: '0' }]);
  });

  it('refuses a write decided on a pool version another replica moved on, catches up, and takes it decided again', async () => {
    const a = await replica('a');
    const b = await replica('b', 60_000);
    await a.append([stored('from-a')]);
    // b decided without seeing a's event: the same version of pool p is taken.
    const error = await b.append([stored('from-b')]).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(VersionConflict);
    // Nothing of it stored, and b has caught up.
    expect(await sql('SELECT id FROM events ORDER BY seq')).toEqual([{ id: 'ev-from-a' }]);
    expect(b.lastSeq).toBe(1);
    const [again] = await b.append([stored('from-b')]);
    expect(again?.seq).toBe(2);
    expect(await sql('SELECT seq, pool, version, id FROM events ORDER BY seq')).toEqual([
      { seq: '1', pool: 'p', version: '1', id: 'ev-from-a' },
      { seq: '2', pool: 'p', version: '2', id: 'ev-from-b' },
    ]);
  });

  it('takes writes to different pools from two replicas without conflict: one gap-free order, the same in both copies', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const seen: MemoryEvent[] = [];
    b.follow((events) => seen.push(...events));
    a.follow(() => undefined);
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => Promise.all([a.append([stored(`a${i}`, 'pool-a')]), b.append([stored(`b${i}`, 'pool-b')])])),
    );
    expect(await sql('SELECT max(seq) AS last, count(*) AS n FROM events')).toEqual([{ last: '60', n: '60' }]);
    await eventually(async () => {
      expect(await a.caughtUp(1_000)).toBe(true);
      expect(await b.caughtUp(1_000)).toBe(true);
    });
    expect(a.read(0).map((event) => event.id)).toEqual(b.read(0).map((event) => event.id));
    expect(a.read(0).map((event) => event.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    // What b was handed is exactly what a wrote.
    expect(seen.map((event) => event.id).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `ev-a${i}`).sort());
  });

  it('wakes a following replica by NOTIFY well before its poll', async () => {
    const a = await replica('a');
    const b = await replica('b', 60_000);
    const seen: string[] = [];
    b.follow((events) => seen.push(...events.map((event) => event.id)));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await a.append([stored('x')]);
    await eventually(() => expect(seen).toEqual(['ev-x']), { timeout: 5_000 });
  });

  it('builds a new replica from the table, and makes a damaged copy again', async () => {
    const a = await replica('a');
    await a.append([stored('one'), stored('two', 'q')]);
    const fresh = await replica('fresh');
    expect(fresh.read(0).map((event) => event.id)).toEqual(['ev-one', 'ev-two']);
    await fresh.close();
    const segment = readdirSync(join(postgres.dir, 'fresh', 'events')).find((name) => name.endsWith('.ndjson'))!;
    writeFileSync(join(postgres.dir, 'fresh', 'events', segment), '{"not":"an event"}\n{"seq":2}\n');
    const reopened = await replica('fresh');
    expect(reopened.read(0).map((event) => event.id)).toEqual(['ev-one', 'ev-two']);
    expect(readdirSync(join(postgres.dir, 'fresh')).some((name) => name.startsWith('events.damaged-'))).toBe(true);
  });

  it('refuses a row changed behind its back (checksum), naming the seq', async () => {
    const a = await replica('a');
    await a.append([stored('one'), stored('two')]);
    await sql(`UPDATE events SET body = replace(body, 'content two', 'content 2') WHERE seq = 2`);
    await expect(replica('other')).rejects.toThrow(/seq 2: checksum mismatch/);
    const rows: number[] = [];
    await expect(
      (async () => {
        for await (const event of a.rowsAfter(0)) rows.push(event.seq);
      })(),
    ).rejects.toThrow(/seq 2: checksum mismatch/);
    expect(rows).toEqual([1]);
  });

  it("refuses a replica whose key differs from the first replica's, even on an empty table, with one line, so no row is kept two ways", async () => {
    const key = EncryptionKey.parse(EncryptionKey.generate());
    const first = await replica('first', 50, key);
    const same = /every replica of one event store needs the same ENGRAM_ENCRYPTION_KEY \(or ENGRAM_ENCRYPTION_KEY_FILE\), or none$/;
    const clear = await replica('clear').catch((error: unknown) => error);
    expect(clear).toBeInstanceOf(EventStoreKeyError);
    expect((clear as Error).message).toMatch(/^the event store postgres:\/\/\S+ is encrypted and this replica has no key: /);
    expect((clear as Error).message).toMatch(same);
    const other = await replica('other', 50, EncryptionKey.parse(EncryptionKey.generate())).catch((error: unknown) => error);
    expect(other).toBeInstanceOf(EventStoreKeyError);
    expect((other as Error).message).toMatch(/ is encrypted with another key than this replica's: /);
    await first.append([stored('one')]);
    const second = await replica('second', 50, key);
    expect(second.read(0).map((event) => event.id)).toEqual(['ev-one']);
    expect(await sql('SELECT DISTINCT sealed FROM events')).toEqual([{ sealed: true }]);
  });

  it('refuses a replica with a key on a table kept in the clear, one written before the store recorded how too', async () => {
    const first = await replica('first');
    await first.append([stored('one')]);
    const key = EncryptionKey.parse(EncryptionKey.generate());
    await expect(replica('keyed', 50, key)).rejects.toThrow(/ is not encrypted and this replica has a key: every replica of one event store /);
    // A table from before the record: its first row says how it is kept, and a refused replica records nothing.
    await sql('UPDATE event_position SET key_check = NULL');
    await expect(replica('keyed', 50, key)).rejects.toThrow(/ is not encrypted and this replica has a key: /);
    expect(await sql('SELECT key_check FROM event_position')).toEqual([{ key_check: null }]);
    await replica('clear');
    expect(await sql('SELECT DISTINCT sealed FROM events')).toEqual([{ sealed: false }]);
    expect((await sql<{ key_check: string }>('SELECT key_check FROM event_position'))[0]?.key_check).toContain('engram-key-check');
  });

  it('refuses to start on a data dir that holds events the table does not (another database)', async () => {
    const a = await replica('a');
    await a.append([stored('one')]);
    await a.close();
    const other = await postgres.server.database();
    try {
      await expect(PostgresEventStore.open({ url: other.url, mirrorDir: join(postgres.dir, 'a', 'events'), logger: silentLogger() })).rejects.toThrow(
        /does not have .*empty data dir/,
      );
    } finally {
      await other.drop();
    }
    expect(existsSync(join(postgres.dir, 'a', 'events'))).toBe(true);
  });
});
