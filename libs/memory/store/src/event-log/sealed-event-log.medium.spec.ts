import { appendFileSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EncryptionKey } from '@engram/config';
import { EVENT_SCHEMA_VERSION, type NewEvent } from '@engram/domain';
import { silentLogger, tempDataDir } from '@engram/testing';
import { plainEventCodec, sealedEventCodec, type EventCodec, type StoredEvent } from './event-codec.js';
import { decodeEventLine, encodeEventLine } from './event-line.js';
import { EventLog, EventLogCorruptError } from './event-log.js';

const TOKEN = 'periwinkle4gazebo';
const key = EncryptionKey.parse(EncryptionKey.generate());
const sealed = sealedEventCodec(key);

let dir: ReturnType<typeof tempDataDir>;
let eventsDir: string;
beforeEach(() => {
  dir = tempDataDir();
  eventsDir = join(dir.path, 'events');
});
afterEach(() => dir.remove());

const open = (codec: EventCodec = sealed, readOnly = false) => EventLog.open({ codec, dir: eventsDir, logger: silentLogger(), readOnly });
const stored = (id: string, content = `${TOKEN} said by ${id}`): NewEvent => ({
  type: 'memory.stored',
  id: `ev-${id}`,
  at: '2026-01-01T00:00:00.000Z',
  pool: 'home',
  actor: 'user',
  causationId: null,
  schemaVersion: EVENT_SCHEMA_VERSION,
  data: { id, type: 'MEMORY', category: 'project', content, confidence: 1, source: 'user' },
});
const segment = () => join(eventsDir, readdirSync(eventsDir).find((name) => name.endsWith('.ndjson')) ?? '');
const lines = () =>
  readFileSync(segment(), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
const storedAt = (index: number): StoredEvent => {
  const decoded = decodeEventLine(lines()[index] ?? '');
  if (!decoded.ok) throw new Error(decoded.reason);
  return decoded.stored;
};
const contents = (log: EventLog) => log.read(0).map((event) => (event.type === 'memory.stored' ? event.data.content : null));

async function failure(attempt: () => unknown): Promise<unknown> {
  try {
    await attempt();
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('a sealed event log', () => {
  it('holds only the clear envelope and a sealed body on each line, and reads the events back after reopening', async () => {
    const log = await open();
    const written = await log.append([stored('a'), stored('b')]);
    await log.close();
    const text = readFileSync(segment(), 'utf8');
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain('"data"');
    expect(text).not.toContain('project');
    const { data: _data, ...envelope } = written[0]!;
    expect(storedAt(0)).toEqual({ ...envelope, sealed: expect.any(String) });
    const reopened = await open();
    expect(reopened.read(0)).toEqual(written);
    expect(reopened.readSeqs([2])).toEqual([written[1]]);
    await reopened.close();
  });

  it('cuts a torn sealed last line on open and goes on from the last whole event', async () => {
    const log = await open();
    await log.append([stored('a'), stored('b')]);
    await log.close();
    const whole = encodeEventLine(sealed.toStored({ ...stored('c'), seq: 3 } as never));
    appendFileSync(segment(), whole.slice(0, whole.length / 2));
    const reopened = await open();
    expect(reopened.lastSeq).toBe(2);
    await reopened.append([stored('d')]);
    await reopened.close();
    expect(contents(await open())).toEqual([`${TOKEN} said by a`, `${TOKEN} said by b`, `${TOKEN} said by d`]);
  });

  it('finds a changed byte of a sealed body by its checksum, naming the segment and line, and cuts nothing', async () => {
    const log = await open();
    await log.append([stored('a'), stored('b'), stored('c')]);
    await log.close();
    const before = readFileSync(segment(), 'utf8');
    const line = lines()[1] ?? '';
    const at = line.indexOf('"sealed":"') + 20;
    writeFileSync(segment(), before.replace(line, `${line.slice(0, at)}${line[at] === 'A' ? 'B' : 'A'}${line.slice(at + 1)}`));
    const error = await failure(() => open());
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect(error).toMatchObject({ segment: '0000000000000001.ndjson', line: 2, reason: 'checksum mismatch' });
  });

  it('does not open a sealed body moved to another line even with its checksum made to match: reading says which line', async () => {
    const log = await open();
    await log.append([stored('a'), stored('b'), stored('c')]);
    await log.close();
    const [first, second] = [storedAt(0), storedAt(1)] as [StoredEvent & { sealed: string }, StoredEvent & { sealed: string }];
    const swapped = [encodeEventLine({ ...first, sealed: second.sealed }), encodeEventLine({ ...second, sealed: first.sealed }), `${lines()[2]}\n`];
    writeFileSync(segment(), swapped.join(''));
    // The checksums match, so the log opens; its events open only when read.
    const reopened = await open(sealed, true);
    const error = await failure(() => reopened.read(0));
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect(error).toMatchObject({ segment: '0000000000000001.ndjson', line: 1 });
    expect(String(error)).toMatch(/line 1: sealed data does not open with this key/);
    expect(reopened.readSeqs([3]).map((event) => event.data)).toMatchObject([{ id: 'c' }]);
  });

  it('does not open under another key, and refuses a clear line in a sealed log (and a sealed one without a key) at open', async () => {
    const log = await open();
    await log.append([stored('a'), stored('b')]);
    await log.close();
    const other = await open(sealedEventCodec(EncryptionKey.parse(EncryptionKey.generate())), true);
    expect(String(await failure(() => other.read(0)))).toMatch(/line 1: sealed data does not open with this key/);
    expect(String(await failure(() => open(plainEventCodec, true)))).toMatch(
      /line 1: sealed, and no encryption key is configured \(ENGRAM_ENCRYPTION_KEY\)/,
    );

    appendFileSync(segment(), encodeEventLine({ ...stored('clear'), seq: 3 } as StoredEvent));
    const error = await failure(() => open());
    expect(error).toBeInstanceOf(EventLogCorruptError);
    expect(error).toMatchObject({ line: 3, reason: 'not sealed, in a sealed log' });
  });

  it("redacts a purged entry's content by sealing the redacted event again, keeping every other line byte for byte", async () => {
    const log = await open();
    await log.append([stored('a', 'secret a'), stored('b', 'kept b')]);
    const before = lines();
    expect(await log.redact(new Set(['a']))).toBe(1);
    expect(await log.redact(new Set(['a']))).toBe(0);
    await log.append([stored('c', 'after c')]);
    await log.close();
    const after = lines();
    expect(after[0]).not.toBe(before[0]);
    expect(after[1]).toBe(before[1]);
    const reopened = await open();
    expect(contents(reopened)).toEqual(['', 'kept b', 'after c']);
    await reopened.close();
  });
});
