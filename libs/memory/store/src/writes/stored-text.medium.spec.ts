import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '@engram/testing';
import { replayDataDir } from '../data-dir/rebuild.js';
import { decodeEventLine } from '../event-log/event-line.js';
import { memoryServicePerTest } from '../testing/memory-service-per-test.js';

const memory = memoryServicePerTest();
const person = { actor: 'user' as const, pool: 'odd' };

/** Every copy of an entry's content the data dir holds: the log's events of it, the flat file's block, and the database's answers. */
async function copiesOf(id: string, dataDir: string, file: 'USER.md' | 'MEMORY.md'): Promise<string[]> {
  const logged = readdirSync(join(dataDir, 'events'))
    .flatMap((name) => readFileSync(join(dataDir, 'events', name), 'utf8').split('\n'))
    .filter((line) => line !== '')
    .map((line) => (decodeEventLine(line) as { stored: { data: { id?: string; content?: string } } }).stored)
    .filter((event) => event.data.id === id && typeof event.data.content === 'string')
    .map((event) => event.data.content as string);
  // Read as bytes and decoded: what an editor or `cat` shows.
  const block = readFileSync(join(dataDir, 'pools', 'odd', file), 'utf8')
    .split('\n§\n')
    .find((text) => text.includes(`[id:${id}]`));
  const flat = block
    ?.replace(/^[^\n]*\n/, '')
    .replace(/^\[id:[^\]]+\] \([a-z]+\) /, '')
    .replace(/\n$/, '');
  const got = (await memory.service.get({ pool: 'odd', id })).content;
  const listed = (await memory.service.list({ pool: 'odd' })).find((entry) => entry.id === id)?.content;
  return [logged.at(-1) ?? 'not logged', flat ?? 'not in the flat file', got, listed ?? 'not listed'];
}

describe('a content holds what every copy can hold', () => {
  it('stores a lone surrogate as one U+FFFD, the same in the answer, the log, the flat file, the database and after a replay', async () => {
    const stored = await memory.service.store({ ...person, content: 'lone \ud800 surrogate', type: 'USER', category: 'preference' });
    expect(stored.content).toBe('lone \ufffd surrogate');
    expect(await copiesOf(stored.id, memory.dataDir, 'USER.md')).toEqual(Array(4).fill('lone \ufffd surrogate'));
    expect((await memory.service.tier1({ pool: 'odd' })).block).toContain('lone \ufffd surrogate');

    await memory.service.close();
    await replayDataDir(memory.dataDir, silentLogger());
    await memory.reopen();
    expect(await copiesOf(stored.id, memory.dataDir, 'USER.md')).toEqual(Array(4).fill('lone \ufffd surrogate'));
  });

  it('keeps NUL, escape sequences and other control characters out of the Tier 1 block and the flat files, on store, update and consolidate', async () => {
    const stored = await memory.service.store({
      ...person,
      content: 'uses\u0000 \u001b[31mred\u001b[0m\r\ntabs\there',
      type: 'USER',
      category: 'preference',
    });
    expect(stored.content).toBe('uses\ufffd \ufffd[31mred\ufffd[0m\ntabs\there');
    expect(await copiesOf(stored.id, memory.dataDir, 'USER.md')).toEqual(Array(4).fill(stored.content));

    const updated = await memory.service.update({ ...person, id: stored.id, content: 'prefers\u0007 \u0085quiet\u007f bells' });
    expect(updated.content).toBe('prefers\ufffd \ufffdquiet\ufffd bells');
    expect(await copiesOf(stored.id, memory.dataDir, 'USER.md')).toEqual(Array(4).fill(updated.content));

    const other = await memory.service.store({ ...person, content: 'likes quiet rooms', type: 'USER', category: 'preference' });
    const merged = await memory.service.consolidate({
      ...person,
      actor: 'worker:consolidate',
      model: 'm',
      merges: [{ supersedes: [stored.id, other.id], content: 'prefers quiet\u0000 rooms \udc00', type: 'USER', category: 'preference' }],
    });
    const mergedId = merged.created[0]!.id;
    expect(merged.created[0]!.content).toBe('prefers quiet\ufffd rooms \ufffd');
    expect(await copiesOf(mergedId, memory.dataDir, 'USER.md')).toEqual(Array(4).fill('prefers quiet\ufffd rooms \ufffd'));

    const block = (await memory.service.tier1({ pool: 'odd' })).block;
    const flatFiles = readFileSync(join(memory.dataDir, 'pools', 'odd', 'USER.md'), 'utf8');
    // eslint-disable-next-line no-control-regex
    for (const text of [block, flatFiles]) expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]|[\ud800-\udfff]/);
  });

  it('answers a retry of the same Idempotency-Key with the entry the first stored, the text spelled either way', async () => {
    const request = { ...person, content: 'key \ud800 text', idempotencyKey: 'K', idempotencyKeyBindsRequest: true };
    const first = await memory.service.store(request);
    const again = await memory.service.store({ ...request, content: 'key \ufffd text' });
    expect(again.id).toBe(first.id);
  });
});
