import { appendFileSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EVENT_SCHEMA_VERSION, type NewEvent } from '@engram/domain';
import { plainEventCodec } from './event-codec.js';
import { EventLog, EventLogCorruptError } from './event-log.js';
import { silentLogger, tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
let eventsDir: string;
beforeEach(() => {
  dir = tempDataDir();
  eventsDir = join(dir.path, 'events');
});
afterEach(() => dir.remove());

const open = (segmentMaxBytes?: number) =>
  EventLog.open({ codec: plainEventCodec, dir: eventsDir, logger: silentLogger(), ...(segmentMaxBytes ? { segmentMaxBytes } : {}) });
const stored = (id: string, content = `content ${id}`): NewEvent => ({
  type: 'memory.stored',
  id: `ev-${id}`,
  at: '2026-01-01T00:00:00.000Z',
  pool: 'p',
  actor: 'user',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id, type: 'MEMORY', category: null, content, confidence: 1, source: 'user' },
});
const segments = () =>
  readdirSync(eventsDir)
    .filter((name) => name.endsWith('.ndjson'))
    .sort();

describe('event log', () => {
  it('gives concurrent appends gap-free seqs in call order and reads them back after reopening', async () => {
    const log = await open();
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => log.append([stored(`m${i}`)])));
    expect(results.map(([event]) => event?.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    await log.close();
    const reopened = await open();
    expect(reopened.lastSeq).toBe(50);
    expect(reopened.read(45).map((event) => event.seq)).toEqual([46, 47, 48, 49, 50]);
    expect(reopened.read(0, 3).map((event) => event.data)).toMatchObject([{ id: 'm0' }, { id: 'm1' }, { id: 'm2' }]);
    await reopened.close();
  });

  it('writes each batch whole and in order: concurrent batches get consecutive seqs, and a resolved batch is in the file', async () => {
    const log = await open();
    const [first, second] = await Promise.all([log.append([stored('a1'), stored('a2'), stored('a3')]), log.append([stored('b1'), stored('b2')])]);
    expect(first?.map((event) => event.seq)).toEqual([1, 2, 3]);
    expect(second?.map((event) => event.seq)).toEqual([4, 5]);
    // What another process sees while this one still holds the log open.
    const reader = await EventLog.open({ codec: plainEventCodec, dir: eventsDir, logger: silentLogger(), readOnly: true });
    expect(reader.read(0).map((event) => event.data)).toMatchObject([{ id: 'a1' }, { id: 'a2' }, { id: 'a3' }, { id: 'b1' }, { id: 'b2' }]);
    await log.close();
  });

  it('rolls over to a new segment named by its first seq and reads across segments', async () => {
    const log = await open(600);
    for (let i = 0; i < 10; i += 1) await log.append([stored(`m${i}`)]);
    await log.close();
    expect(segments().length).toBeGreaterThan(2);
    expect(segments()[0]).toBe('0000000000000001.ndjson');
    const reopened = await open(600);
    expect(reopened.read(0).map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await reopened.close();
  });

  it('refuses every write after a failed one and calls onFatal once, so the process restarts', async () => {
    const fatal: Error[] = [];
    const log = await EventLog.open({
      codec: plainEventCodec,
      dir: eventsDir,
      logger: silentLogger(),
      segmentMaxBytes: 200,
      onFatal: (error) => fatal.push(error),
    });
    await log.append([stored('m0')]);
    // The next append rolls over to a new segment, which cannot be created where a file now stands.
    renameSync(eventsDir, `${eventsDir}-moved`);
    writeFileSync(eventsDir, 'not a folder');
    await expect(log.append([stored('m1')])).rejects.toThrow();
    await expect(log.append([stored('m2')])).rejects.toThrow();
    expect(fatal).toHaveLength(1);
  });

  it('cuts a torn last line on open and continues from the last whole event', async () => {
    const log = await open();
    await log.append([stored('a'), stored('b')]);
    await log.close();
    const segment = join(eventsDir, segments()[0] ?? '');
    appendFileSync(segment, '{"seq":3,"type":"memory.sto');
    const reopened = await open();
    expect(reopened.lastSeq).toBe(2);
    expect(readFileSync(segment, 'utf8').endsWith('\n')).toBe(true);
    const [next] = await reopened.append([stored('c')]);
    expect(next?.seq).toBe(3);
    await reopened.close();
    expect((await open()).read(0).map((event) => event.data)).toMatchObject([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
  });

  it('refuses to open, cutting nothing, when a complete last line fails its checksum, naming the segment and line', async () => {
    const log = await open();
    await log.append([stored('a'), stored('b', 'original')]);
    await log.close();
    const segment = join(eventsDir, segments()[0] ?? '');
    const damaged = readFileSync(segment, 'utf8').replace('original', 'tampered');
    writeFileSync(segment, damaged);
    for (const readOnly of [false, true]) {
      const error = await EventLog.open({ codec: plainEventCodec, dir: eventsDir, logger: silentLogger(), readOnly }).catch(
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(EventLogCorruptError);
      expect(error).toMatchObject({ segment: '0000000000000001.ndjson', line: 2 });
      expect(String(error)).toMatch(/0000000000000001\.ndjson, line 2: checksum mismatch/);
    }
    // The damaged line is still there for a person to look at.
    expect(readFileSync(segment, 'utf8')).toBe(damaged);
  });

  it('refuses to open when a line in the middle is corrupt, naming the segment and line', async () => {
    const log = await open();
    await log.append([stored('a'), stored('b', 'middle'), stored('c')]);
    await log.close();
    const segment = join(eventsDir, segments()[0] ?? '');
    writeFileSync(segment, readFileSync(segment, 'utf8').replace('middle', 'muddle'));
    const error = await open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect(error).toMatchObject({ segment: '0000000000000001.ndjson', line: 2 });
    expect(String(error)).toMatch(/0000000000000001\.ndjson, line 2: checksum mismatch/);
  });

  it('redacts content of given ids with fresh checksums, keeping every other line as is', async () => {
    const log = await open();
    await log.append([stored('a', 'secret a'), stored('b', 'public b')]);
    expect(await log.redact(new Set(['a']))).toBe(1);
    await log.append([stored('c')]);
    await log.close();
    const text = readFileSync(join(eventsDir, segments()[0] ?? ''), 'utf8');
    expect(text).not.toContain('secret a');
    expect(text).toContain('public b');
    const reopened = await open();
    expect(reopened.read(0).map((event) => (event.type === 'memory.stored' ? event.data.content : null))).toEqual(['', 'public b', 'content c']);
    await reopened.close();
  });
});
