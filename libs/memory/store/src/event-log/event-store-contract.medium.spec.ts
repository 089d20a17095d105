import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, type NewEvent } from '@engram/domain';
import { silentLogger, startPostgres, tempDataDir, type TestDatabase, type TestPostgres } from '@engram/testing';
import { plainEventCodec } from './event-codec.js';
import { EventLog } from './event-log.js';
import type { EventStore } from './event-store.js';
import { PostgresEventStore } from './postgres/postgres-event-store.js';

/**
 * The EventStore contract, run against each store: the data dir's file log (the default) and the
 * PostgreSQL table with its copy in the data dir (ENGRAM_EVENT_STORE=postgres://…).
 */
interface StoreUnderTest {
  readonly name: string;
  setUp(): Promise<void>;
  open(): Promise<EventStore>;
  /** Every text the store keeps, wherever it keeps it (files, rows). */
  everything(): Promise<string>;
  tearDown(): Promise<void>;
}

let dir: ReturnType<typeof tempDataDir>;
const eventsDir = () => join(dir.path, 'events');
const fileText = () =>
  readdirSync(eventsDir())
    .filter((name) => name.endsWith('.ndjson'))
    .map((name) => readFileSync(join(eventsDir(), name), 'utf8'))
    .join('');

const fileLog: StoreUnderTest = {
  name: 'file log',
  setUp: async () => undefined,
  open: () => EventLog.open({ dir: eventsDir(), logger: silentLogger(), codec: plainEventCodec }),
  everything: async () => fileText(),
  tearDown: async () => undefined,
};

let server: TestPostgres;
let database: TestDatabase | null = null;
const postgres: StoreUnderTest = {
  name: 'PostgreSQL',
  setUp: async () => {
    database = await server.database();
  },
  open: () => PostgresEventStore.open({ url: database!.url, mirrorDir: eventsDir(), logger: silentLogger() }),
  everything: async () => {
    const rows = await database!.query<{ line: string }>('SELECT envelope || body AS line FROM events ORDER BY seq');
    return rows.map((row) => row.line).join('\n') + fileText();
  },
  tearDown: async () => {
    await database?.drop();
    database = null;
  },
};

beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server.stop();
});

const stored = (id: string, pool = 'p', content = `content ${id}`): NewEvent => ({
  type: 'memory.stored',
  id: `ev-${id}`,
  at: '2026-01-01T00:00:00.000Z',
  pool,
  actor: 'user',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id, type: 'MEMORY', category: null, content, confidence: 1, source: 'user' },
});

describe.each([fileLog, postgres])('EventStore contract: $name', (store) => {
  beforeEach(async () => {
    dir = tempDataDir();
    await store.setUp();
  });
  afterEach(async () => {
    await store.tearDown();
    dir.remove();
  });

  it('gives batches gap-free seqs in call order, resolved once durable, and reads them back after reopening', async () => {
    const log = await store.open();
    expect(log.lastSeq).toBe(0);
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => log.append([stored(`m${i}a`, `pool${i % 3}`), stored(`m${i}b`, `pool${i % 3}`)])),
    );
    expect(results.flat().map((event) => event.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(log.lastSeq).toBe(40);
    await log.close();

    const reopened = await store.open();
    expect(reopened.lastSeq).toBe(40);
    expect(reopened.read(37).map((event) => event.seq)).toEqual([38, 39, 40]);
    expect(reopened.read(0, 2).map((event) => event.data)).toMatchObject([{ id: 'm0a' }, { id: 'm0b' }]);
    expect(reopened.read(0, 100, (event) => event.pool === 'pool1')).toHaveLength(14);
    expect(reopened.readSeqs([2, 17, 40]).map((event) => event.id)).toEqual(['ev-m0b', 'ev-m8a', 'ev-m19b']);
    expect([...reopened.eventsAfter(38)].map((event) => event.id)).toEqual(['ev-m19a', 'ev-m19b']);
    expect(reopened.read(0)[0]).toEqual({ ...stored('m0a', 'pool0'), seq: 1 });
    await reopened.close();
  });

  it('forgets redacted content in everything it keeps, and keeps the rest', async () => {
    const log = await store.open();
    await log.append([stored('keep', 'p', 'the user likes green tea'), stored('gone', 'p', 'the door code is 4711')]);
    expect(await store.everything()).toContain('4711');
    expect(await log.redact(new Set(['gone']))).toBe(1);
    expect(await store.everything()).not.toContain('4711');
    expect(await store.everything()).toContain('green tea');
    expect(log.read(0).map((event) => event.data)).toMatchObject([{ content: 'the user likes green tea' }, { id: 'gone', content: '' }]);
    await log.close();
    const reopened = await store.open();
    expect(reopened.readSeqs([2])[0]?.data).toMatchObject({ id: 'gone', content: '' });
    await reopened.close();
  });

  it('refuses appends once closed', async () => {
    const log = await store.open();
    await log.close();
    await expect(log.append([stored('late')])).rejects.toThrow(/closed/);
  });
});
