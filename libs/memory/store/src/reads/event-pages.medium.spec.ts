import { openSync, readFileSync, readdirSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { describe, expect, it } from '@jest/globals';
import { memoryServicePerTest } from '../testing/memory-service-per-test.js';

const memory = memoryServicePerTest();
const team = { actor: 'user' as const, pool: 'team' };
const other = { actor: 'user' as const, pool: 'other' };

async function allPages(request: { pool: string; memoryId?: string; limit: number }): Promise<{ seqs: number[]; pages: number }> {
  const seqs: number[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await memory.service.events({ ...request, ...(cursor ? { cursor } : {}) });
    pages += 1;
    seqs.push(...page.data.map((event) => event.seq));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return { seqs, pages };
}

describe('event pages served from the event index', () => {
  it("pages one pool's events oldest first with limit and an opaque cursor, never another pool's", async () => {
    for (let index = 0; index < 7; index++) {
      await memory.service.store({ ...team, content: `team fact ${index}` });
      await memory.service.store({ ...other, content: `other fact ${index}` });
    }
    const first = await memory.service.events({ pool: 'team', limit: 3 });
    expect(first.data.map((event) => event.seq)).toEqual([1, 3, 5]);
    expect(first.data.every((event) => event.pool === 'team')).toBe(true);
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(first.nextCursor).not.toContain('5');
    const { seqs, pages } = await allPages({ pool: 'team', limit: 3 });
    expect(seqs).toEqual([1, 3, 5, 7, 9, 11, 13]);
    expect(pages).toBe(3);
    expect((await memory.service.events({ pool: 'team', after: 9 })).data.map((event) => event.seq)).toEqual([11, 13]);
    expect(await memory.service.events({ pool: 'team', after: 13 })).toEqual({ data: [], nextCursor: null });
    expect(await memory.service.events({ pool: 'emptypool' })).toEqual({ data: [], nextCursor: null });
  });

  it("refuses a cursor it did not give out, and a bad limit or memoryId, as the caller's mistake", async () => {
    for (const request of [
      { pool: 'team', cursor: 'not-a-cursor' },
      { pool: 'team', cursor: Buffer.from('ev1:-1').toString('base64url') },
      { pool: 'team', cursor: 'a/b' },
      { pool: 'team', limit: 0 },
      { pool: 'team', after: -1 },
      { pool: 'team', memoryId: '../x' },
      { pool: '../etc' },
    ]) {
      await expect(memory.service.events(request)).rejects.toThrow(expect.objectContaining({ name: 'MemoryError', code: 'invalid_request' }));
    }
  });

  it("reads one entry's history by id: its own events, references and the consolidation that archived it", async () => {
    const tea = await memory.service.store({ ...team, content: 'drinks oolong tea' });
    const coffee = await memory.service.store({ ...team, content: 'drinks coffee' });
    await memory.service.update({ ...team, id: tea.id, content: 'drinks green tea' });
    await memory.service.search({ pool: 'team', query: 'tea', recordReference: true });
    await memory.service.close();
    await memory.reopen();
    const merged = await memory.service.consolidate({
      ...team,
      model: 'm',
      merges: [{ content: 'drinks tea and coffee', type: 'USER', category: null, supersedes: [tea.id, coffee.id] }],
    });
    const history = await memory.service.events({ pool: 'team', memoryId: tea.id });
    expect(history.data.map((event) => event.type)).toEqual(['memory.stored', 'memory.updated', 'memory.referenced', 'memory.consolidated']);
    expect(history.nextCursor).toBeNull();
    expect((await memory.service.events({ pool: 'team', memoryId: merged.created[0]!.id })).data.map((event) => event.type)).toEqual([
      'memory.consolidated',
    ]);
    // The same id asked for through another pool shows nothing.
    expect((await memory.service.events({ pool: 'other', memoryId: tea.id })).data).toEqual([]);
    const paged = await allPages({ pool: 'team', memoryId: tea.id, limit: 1 });
    expect(paged.seqs).toEqual(history.data.map((event) => event.seq));
  });

  it("serves a purged entry's history without its content", async () => {
    const secret = await memory.service.store({ ...team, content: 'the door code is 4711' });
    await memory.service.update({ ...team, id: secret.id, content: 'the door code is 0815' });
    await memory.service.purge({ ...team, id: secret.id });
    const history = await memory.service.events({ pool: 'team', memoryId: secret.id });
    expect(history.data.map((event) => event.type)).toEqual(['memory.stored', 'memory.updated', 'memory.purged']);
    expect(JSON.stringify(history.data)).not.toMatch(/4711|0815/);
    expect(JSON.stringify(await memory.service.events({ pool: 'team' }))).not.toMatch(/4711|0815/);
  });

  it("reads only the events it returns: damage to another pool's line does not reach a quiet pool's read", async () => {
    await memory.service.store({ ...team, content: 'first team fact' });
    for (let index = 0; index < 20; index++) await memory.service.store({ ...other, content: `busy fact ${index}` });
    await memory.service.store({ ...team, content: 'second team fact' });
    // Flip one byte inside a line of the busy pool, as a disk might; the log checks lines as it reads them.
    const segment = join(memory.dataDir, 'events', readdirSync(join(memory.dataDir, 'events'))[0]!);
    const at = readFileSync(segment, 'utf8').indexOf('busy fact 7');
    const fd = openSync(segment, 'r+');
    writeSync(fd, 'B', at);
    closeSync(fd);
    expect((await memory.service.events({ pool: 'team' })).data.map((event) => event.seq)).toEqual([1, 22]);
    expect((await memory.service.eventsAfter({ pool: 'team', after: 0 })).map((event) => event.seq)).toEqual([1, 22]);
    await expect(memory.service.events({ pool: 'other' })).rejects.toThrow(/checksum/);
  });

  it('indexes, once at start, the events of a database made before the index existed', async () => {
    const kept = await memory.service.store({ ...team, content: 'kept fact' });
    await memory.service.store({ ...other, content: 'other fact' });
    await memory.service.close();
    const db = new Database(join(memory.dataDir, 'engram.db'));
    db.exec("DROP TABLE pool_events; DROP TABLE memory_events; DELETE FROM meta WHERE key = 'events_indexed_seq'");
    db.close();
    await memory.reopen();
    await memory.service.store({ ...team, content: 'new fact' });
    expect((await memory.service.events({ pool: 'team' })).data.map((event) => event.seq)).toEqual([1, 3]);
    expect((await memory.service.events({ pool: 'team', memoryId: kept.id })).data.map((event) => event.seq)).toEqual([1]);
    expect((await memory.service.events({ pool: 'other' })).data.map((event) => event.seq)).toEqual([2]);
  });
});
