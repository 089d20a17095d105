import { createHook } from 'node:async_hooks';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, type MemoryEvent, type NewEvent } from '@engram/domain';
import { CommitFeed } from './commit-feed.js';
import { DataDir } from '../data-dir/data-dir.js';
import { openDatabase } from '../database/database.js';
import { plainEventCodec } from '../event-log/event-codec.js';
import { EventLog } from '../event-log/event-log.js';
import { FlatFiles } from '../flat-files/flat-files.js';
import { Projection } from '../projection/projection.js';
import { silentLogger, tempDataDir } from '@engram/testing';
import { WritePipeline } from './write-pipeline.js';

let dir: ReturnType<typeof tempDataDir>;
let log: EventLog;
let projection: Projection;
let pipeline: WritePipeline;
/** Each batch the pipeline published, as the seqs in it. */
let batches: number[][];
/** How many times the pipeline appended to the log (one append = one durable write). */
let appends: number;
/** While set, appends wait for it: a batch "on its way to disk" for as long as the test wants. */
let gate: Promise<void> | null;
let openGate: () => void;

beforeEach(async () => {
  dir = tempDataDir();
  const dataDir = new DataDir(dir.path);
  log = await EventLog.open({ codec: plainEventCodec, dir: dataDir.eventsDir, logger: silentLogger() });
  projection = new Projection(openDatabase(dataDir.databasePath));
  const commits = new CommitFeed(silentLogger());
  batches = [];
  commits.subscribe((events) => batches.push(events.map((event) => event.seq)));
  appends = 0;
  gate = null;
  openGate = () => undefined;
  let ids = 0;
  pipeline = new WritePipeline({
    log: {
      append: async (events) => {
        appends += 1;
        if (gate) await gate;
        return log.append(events);
      },
    },
    projection,
    queries: projection.queries,
    flatFiles: new FlatFiles(dataDir, (pool) => projection.queries.activeEntries(pool)),
    commits,
    newId: () => `id${++ids}`,
    diskFull: { enter: () => undefined, refusal: () => null },
    logger: silentLogger(),
  });
});
afterEach(async () => {
  openGate(); // a failed expectation must not leave a batch waiting forever
  await pipeline.drain();
  await log.close();
  projection.close();
  dir.remove();
});

let eventIds = 0;
function stored(id: string): NewEvent {
  eventIds += 1;
  return {
    type: 'memory.stored',
    id: `ev${eventIds}`,
    at: '2026-05-01T12:00:00.000Z',
    pool: 'team',
    actor: 'user',
    causationId: null,
    schemaVersion: EVENT_SCHEMA_VERSION,
    data: { id, type: 'MEMORY', category: 'project', content: `fact ${id}`, confidence: 1, source: 'user' },
  };
}

/** Closes the gate: appends wait until the returned function (or the end of the test) opens it. */
function closeGate(): () => void {
  let release = (): void => undefined;
  gate = new Promise<void>((resolve) => (release = resolve));
  openGate = () => {
    gate = null;
    release();
  };
  return openGate;
}

describe('WritePipeline on a real log and database', () => {
  it('group-commits concurrent writers: one append, one published batch, every write applied when it resolves', async () => {
    const written = await Promise.all(Array.from({ length: 20 }, (_, i) => pipeline.write([stored(`m${i}`)])));
    expect(appends).toBe(1);
    expect(batches).toEqual([Array.from({ length: 20 }, (_, i) => i + 1)]);
    expect(written.map((changes) => changes.get(`m${written.indexOf(changes)}`)?.content)).toEqual(
      Array.from({ length: 20 }, (_, i) => `fact m${i}`),
    );
    expect(projection.lastSeq).toBe(20);
    expect(log.read(0).map((event: MemoryEvent) => event.seq)).toHaveLength(20);
  });

  it('lets writers that arrive while a batch is on its way to disk share the next one', async () => {
    const open = closeGate();
    const first = pipeline.write([stored('a')]);
    await new Promise((resolve) => setTimeout(resolve, 10)); // the first batch is now waiting at the log
    const later = ['b', 'c', 'd'].map((id) => pipeline.write([stored(id)]));
    open();
    await Promise.all([first, ...later]);
    expect(appends).toBe(2);
    expect(batches).toEqual([[1], [2, 3, 4]]);
  });

  it('decides later writes against an entry in flight, and answers a retry once the first write is applied, without polling', async () => {
    const open = closeGate();
    const first = pipeline.write([stored('a')]);
    expect(pipeline.current('a')?.content).toBe('fact a'); // in flight, not yet in the database
    expect(projection.queries.get('a')).toBeUndefined();
    // A waiter that polled would queue a turn of the event loop (an Immediate) per check.
    let immediates = 0;
    const hook = createHook({ init: (_id, type) => void (type === 'Immediate' && (immediates += 1)) }).enable();
    let settled = false;
    const retry = pipeline.settled('a').then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 30));
    hook.disable();
    expect(settled).toBe(false);
    expect(immediates).toBe(0);
    open();
    await retry;
    expect(projection.queries.get('a')?.content).toBe('fact a');
    await first;
  });

  it('gives fresh ids that are neither stored nor in flight', async () => {
    await pipeline.write([stored('id1')]);
    const open = closeGate();
    const inFlight = pipeline.write([stored('id2')]);
    expect(pipeline.freshId()).toBe('id3');
    open();
    await inFlight;
  });

  it('rejects the writers of a batch the log refused, and the entries are no longer in flight', async () => {
    await log.close();
    await expect(pipeline.write([stored('a')])).rejects.toThrow('event log is closed');
    expect(pipeline.current('a')).toBeUndefined();
    await pipeline.settled('a');
    log = await EventLog.open({ codec: plainEventCodec, dir: new DataDir(dir.path).eventsDir, logger: silentLogger() });
  });
});
