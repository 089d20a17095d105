import { copyFileSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, replayEvents, type EventDataByType, type EventType, type MemoryEvent, type NewEvent } from '@engram/domain';
import { compareEntries } from '../data-dir/entry-equality.js';
import { EncryptionKey } from '@engram/config';
import { plainEventCodec, sealedEventCodec, type EventCodec, type StoredEvent } from './event-codec.js';
import { EventLog, EventLogCorruptError } from './event-log.js';
import { decodeEventLine } from './event-line.js';
import { legacyEventLine } from '../testing/legacy-event-line.js';
import { eventually, silentLogger, tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
let eventsDir: string;
beforeEach(() => {
  dir = tempDataDir();
  eventsDir = join(dir.path, 'events');
});
afterEach(() => dir.remove());

let codec: EventCodec = plainEventCodec;
const open = (options: { readOnly?: boolean; segmentMaxBytes?: number } = {}) =>
  EventLog.open({ codec, dir: eventsDir, logger: silentLogger(), ...options });
let minute = 0;
function event<T extends EventType>(type: T, pool: string, data: EventDataByType[T]): NewEvent {
  minute += 1;
  return {
    type,
    id: `ev-${minute}`,
    at: new Date(Date.UTC(2026, 0, 1) + minute * 60_000).toISOString(),
    pool,
    actor: 'user',
    causationId: null,
    schemaVersion: EVENT_SCHEMA_VERSION,
    data,
  } as NewEvent;
}
const stored = (pool: string, id: string, content = `the fact called ${id}`) =>
  event('memory.stored', pool, { id, type: 'MEMORY', category: 'project', content, confidence: 0.9, source: 'user' });
const referenced = (pool: string, ...ids: string[]) => event('memory.referenced', pool, { ids });
const lines = () =>
  readdirSync(eventsDir)
    .filter((name) => name.endsWith('.ndjson'))
    .sort()
    .flatMap((name) => readFileSync(join(eventsDir, name), 'utf8').split('\n'))
    .filter((line) => line !== '');
const typeOf = (line: string) => (decodeEventLine(line) as { stored: { type: string } }).stored.type;
const logBytes = () =>
  readdirSync(eventsDir)
    .filter((name) => name.endsWith('.ndjson'))
    .reduce((sum, name) => sum + statSync(join(eventsDir, name)).size, 0);

async function replayed(): Promise<ReturnType<typeof replayEvents>> {
  const log = await open({ readOnly: true });
  return replayEvents(log.eventsAfter(0));
}

/** Two pools, references of every kind: repeated, of archived entries, of a purged one, of another pool's, of one not stored yet. */
async function writeHistory(log: EventLog): Promise<void> {
  await log.append([stored('a', 'a1'), stored('a', 'a2'), stored('b', 'b1')]);
  for (let round = 0; round < 30; round += 1) {
    await log.append([referenced('a', 'a1', 'a2'), referenced('b', 'b1', 'a1')]);
    if (round === 5) await log.append([event('memory.archived', 'a', { id: 'a2', reason: 'stale' })]);
    if (round === 10) await log.append([referenced('a', 'a3'), stored('a', 'a3'), event('memory.purged', 'b', { id: 'b1' })]);
    if (round === 20) await log.append([event('memory.restored', 'a', { id: 'a2' }), stored('b', 'b2')]);
  }
  await log.append([stored('a', 'a4')]);
}

const codecs: [string, EventCodec][] = [
  ['clear', plainEventCodec],
  ['sealed', sealedEventCodec(EncryptionKey.parse(EncryptionKey.generate()))],
];

describe.each(codecs)('event log compaction, %s lines', (_, each) => {
  beforeEach(() => {
    codec = each;
  });

  it("sums each pool's references into one event with each entry's count and last time; replay gives the same entries", async () => {
    const log = await open();
    await writeHistory(log);
    const before = await replayed();
    const kept = lines().filter((line) => typeOf(line) !== 'memory.referenced');
    const bytesBefore = logBytes();

    const compaction = await log.compact();
    await log.close();

    expect(compaction?.summaries.map((summary) => summary.pool).sort()).toEqual(['a', 'b']);
    expect(compareEntries((await replayed()).entries, before.entries)).toEqual([]);
    const after = await replayed();
    expect(after.entries.get('a1')).toMatchObject({ referenceCount: 30 }); // not those named in pool b
    expect(after.entries.get('a3')).toMatchObject({ referenceCount: 0 }); // not the reference written before it was stored
    expect(after.entries.has('b1')).toBe(false);
    // Every other line is as it was, checksum included; the references are two lines now.
    expect(lines().filter((line) => typeOf(line) !== 'memory.referenced')).toEqual(kept);
    expect(lines().filter((line) => typeOf(line) === 'memory.referenced')).toHaveLength(2);
    expect(logBytes()).toBeLessThan(bytesBefore / 3);
    const reopened = await open();
    expect(reopened.lastSeq).toBe(log.lastSeq);
    await reopened.close();
  });

  it('writes the lines of a log written before lines were short in short, and replay gives the same entries', async () => {
    const log = await open();
    await writeHistory(log);
    await log.close();
    for (const name of readdirSync(eventsDir).filter((file) => file.endsWith('.ndjson'))) {
      const path = join(eventsDir, name);
      const old = readFileSync(path, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => legacyEventLine((decodeEventLine(line) as { stored: StoredEvent }).stored));
      writeFileSync(path, old.join(''));
    }
    const before = await replayed();
    const bytesBefore = logBytes();

    const reopened = await open();
    await reopened.compact();
    await reopened.close();

    expect(lines().every((line) => line.startsWith('{"s":'))).toBe(true);
    expect(compareEntries((await replayed()).entries, before.entries)).toEqual([]);
    expect(logBytes()).toBeLessThan(bytesBefore / 3);
  });

  it('goes on appending after a compaction, and a second one sums the first sum with the new references', async () => {
    const log = await open();
    await writeHistory(log);
    const firstSums = await log.compact();
    await log.append([referenced('a', 'a1'), stored('a', 'a5'), referenced('a', 'a5', 'a1')]);
    const withNew = await replayed();
    await log.compact();
    await log.append([stored('b', 'b3')]);
    await log.close();

    const after = await replayed();
    expect(compareEntries(new Map([...after.entries].filter(([id]) => id !== 'b3')), withNew.entries)).toEqual([]);
    expect(after.entries.get('a1')).toMatchObject({ referenceCount: 32 });
    expect(lines().filter((line) => typeOf(line) === 'memory.referenced')).toHaveLength(2);
    expect(readdirSync(eventsDir).filter((name) => name.endsWith('.ndjson'))).toHaveLength(2); // the merged one, and the new one
    expect(firstSums?.removed.length).toBeGreaterThan(0);
    // Reads of the log skip the seqs that are gone and find the sums where the last reference was.
    const reader = await open({ readOnly: true });
    const seqs = reader.read(0).map((line) => line.seq);
    expect(reader.readSeqs([1, ...(firstSums?.removed.map((removed) => removed.seq) ?? []), ...seqs.slice(-3)]).map((line) => line.seq)).toEqual([
      1,
      ...seqs.slice(-3),
    ]);
  });

  it('appends to a compacted segment that is the last one after a restart, and reads it back', async () => {
    const log = await open();
    await writeHistory(log);
    await log.compact();
    await log.close();
    const reopened = await open();
    const before = reopened.read(0).map((line) => line.seq);
    const [next] = await reopened.append([stored('a', 'after')]);
    expect(next?.seq).toBe((before.at(-1) ?? 0) + 1);
    expect(reopened.read(0).map((line) => line.seq)).toEqual([...before, next?.seq]);
    expect(reopened.readSeqs([next?.seq ?? 0]).map((line) => line.data)).toMatchObject([{ id: 'after' }]);
    await reopened.close();
    expect((await open({ readOnly: true })).read(0).map((line) => line.seq)).toEqual([...before, next?.seq]);
  });

  it('keeps a purge redacted, and redacts a compacted segment', async () => {
    const log = await open();
    await log.append([stored('a', 'secret', 'my secret text'), stored('a', 'other', 'keep this'), referenced('a', 'secret', 'other')]);
    await log.append([event('memory.purged', 'a', { id: 'secret' })]);
    expect(await log.redact(new Set(['secret']))).toBe(1);
    await log.compact();
    await log.append([stored('a', 'late', 'late secret')]);
    await log.compact();
    expect(await log.redact(new Set(['other']))).toBe(1);
    await log.close();
    const text = lines().join('\n');
    expect(text).not.toContain('my secret text');
    expect(text).not.toContain('keep this');
    expect(text.includes('late secret')).toBe(!codec.sealing);
    const contents = (await open({ readOnly: true })).read(0).flatMap((line) => (line.type === 'memory.stored' ? [line.data.content] : []));
    expect(contents).toEqual(['', '', 'late secret']);
    expect((await replayed()).entries.get('other')).toMatchObject({ content: '', referenceCount: 1 });
  });

  it('removes at start a segment that an interrupted compaction had already summed into the one before it', async () => {
    const log = await open({ segmentMaxBytes: 2_000 });
    await writeHistory(log);
    await log.close();
    const names = readdirSync(eventsDir).filter((name) => name.endsWith('.ndjson'));
    expect(names.length).toBeGreaterThan(3);
    const saved = join(dir.path, 'second');
    copyFileSync(join(eventsDir, names[1] ?? ''), saved);
    const before = await replayed();
    const compacting = await open({ segmentMaxBytes: 2_000 });
    await compacting.compact();
    await compacting.close();
    // The crash came after the rename and before the second segment was removed.
    copyFileSync(saved, join(eventsDir, names[1] ?? ''));
    writeFileSync(join(eventsDir, `${names[0]}.compact-tmp`), 'half a compaction');

    await expect(open({ readOnly: true })).resolves.toBeInstanceOf(EventLog); // verify reads past it
    const reopened = await open({ segmentMaxBytes: 2_000 });
    await reopened.close();
    expect(readdirSync(eventsDir).sort()).toEqual([names[0]]);
    expect(compareEntries((await replayed()).entries, before.entries)).toEqual([]);
  });

  it('refuses to open a compacted log with a line removed, naming the first missing seq', async () => {
    const log = await open();
    await writeHistory(log);
    await log.compact();
    await log.close();
    const [name] = readdirSync(eventsDir).filter((file) => file.endsWith('.ndjson'));
    const path = join(eventsDir, name ?? '');
    const text = readFileSync(path, 'utf8').split('\n');
    const removedLine = text.findIndex((line) => typeOf(line) === 'memory.archived');
    writeFileSync(path, text.filter((_, index) => index !== removedLine).join('\n'));
    const error = await open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect(String(error)).toMatch(/is missing/);
  });

  it('sums by itself, without waiting for another append, the references appended while a compaction ran', async () => {
    const compactions: number[] = [];
    const log = await EventLog.open({
      codec,
      dir: eventsDir,
      logger: silentLogger(),
      autoCompact: { minReferenceBytes: 1, shareOfRest: 0 },
      onCompacted: (compaction) => compactions.push(compaction.removed.length),
    });
    // Enough events that the compaction's fold yields to the event loop (every 1,000) and lets an append in.
    await log.append(Array.from({ length: 1_500 }, (_, i) => stored('a', `a${i}`)));
    await log.append([referenced('a', 'a1')]); // starts a compaction
    await log.append([referenced('a', 'a1'), referenced('a', 'a2')]); // while it folds, after it sealed what it sums
    expect(compactions).toHaveLength(0);
    await eventually(() => expect(compactions).toEqual([0, 2]));
    expect(log.size.referenceBytes).toBe(0);
    await log.close();
    expect((await replayed()).entries.get('a1')).toMatchObject({ referenceCount: 2 });
  });

  it('compacts by itself once the references outweigh the share of the rest it is given', async () => {
    const compactions: number[] = [];
    const log = await EventLog.open({
      codec,
      dir: eventsDir,
      logger: silentLogger(),
      autoCompact: { minReferenceBytes: 4_000, shareOfRest: 0.5 },
      onCompacted: (compaction) => compactions.push(compaction.removed.length),
    });
    await log.append([stored('a', 'a1'), stored('a', 'a2')]);
    for (let i = 0; i < 200; i += 1) await log.append([referenced('a', 'a1', 'a2')]);
    await log.close();
    expect(compactions.length).toBeGreaterThan(1);
    expect(logBytes()).toBeLessThan(8_000);
    expect((await replayed()).entries.get('a1')).toMatchObject({ referenceCount: 200 });
    const events: MemoryEvent[] = (await open({ readOnly: true })).read(0);
    expect(events.at(-1)?.seq).toBe(202);
  });
});
