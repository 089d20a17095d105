import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryError } from '@engram/contracts';
import { CONTENT_MAX_CHARS } from '@engram/domain';
import { DataDirLockedError } from '../data-dir/data-dir-lock.js';
import type { MemoryService } from './memory-service.js';
import { renderFlatFile } from '../flat-files/flat-file-format.js';
import { openMemoryService } from '../data-dir/open-memory-service.js';
import { silentLogger, tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
let service: MemoryService;
let now = new Date('2026-05-01T12:00:00.000Z');
const open = () => openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger: silentLogger(), clock: () => now });
const user = { actor: 'user' as const, pool: 'team' };

beforeEach(async () => {
  dir = tempDataDir();
  now = new Date('2026-05-01T12:00:00.000Z');
  service = await open();
});
afterEach(async () => {
  await service.close();
  dir.remove();
});

async function expectError(promise: Promise<unknown>, code: MemoryError['code']): Promise<void> {
  await expect(promise).rejects.toBeInstanceOf(MemoryError);
  await expect(promise).rejects.toMatchObject({ code });
}
function logText(): string {
  const events = join(dir.path, 'events');
  return readdirSync(events)
    .map((name) => readFileSync(join(events, name), 'utf8'))
    .join('');
}

describe('MemoryService on a real data dir', () => {
  it('stores, gets, lists and updates an entry, with short random ids', async () => {
    const stored = await service.store({ ...user, content: '  prefers tabs over spaces ', category: 'preference' });
    expect(stored).toMatchObject({
      pool: 'team',
      type: 'USER',
      category: 'preference',
      content: 'prefers tabs over spaces',
      confidence: 1,
      source: 'user',
    });
    expect(stored.id).toMatch(/^[a-z0-9]{10}$/);
    expect(await service.get({ pool: 'team', id: stored.id })).toEqual(stored);
    expect(await service.list({ pool: 'team' })).toEqual([stored]);
    const updated = await service.update({ ...user, id: stored.id, content: 'prefers spaces', confirmed: true });
    expect(updated).toMatchObject({ content: 'prefers spaces', isConfirmed: true });
    expect((await service.stats({})).lastSeq).toBe(3);
  });

  it('pages through a pool with limit and offset, newest first', async () => {
    const ids: string[] = [];
    for (let index = 0; index < 5; index++) {
      now = new Date(Date.UTC(2026, 4, 1, 12, index));
      ids.push((await service.store({ ...user, content: `fact number ${index}` })).id);
    }
    const newestFirst = [...ids].reverse();
    expect((await service.list({ pool: 'team', limit: 2, offset: 2 })).map((entry) => entry.id)).toEqual(newestFirst.slice(2, 4));
    expect((await service.list({ pool: 'team', limit: 2, offset: 4 })).map((entry) => entry.id)).toEqual(newestFirst.slice(4));
    await expectError(service.list({ pool: 'team', offset: -1 }), 'invalid_request');
  });

  it('rejects invalid input and unknown ids without writing anything', async () => {
    await expectError(service.store({ ...user, pool: '../etc', content: 'x' }), 'invalid_request');
    await expectError(service.store({ ...user, content: '   ' }), 'invalid_request');
    await expectError(service.store({ ...user, content: 'x'.repeat(CONTENT_MAX_CHARS + 1) }), 'invalid_request');
    await expectError(service.store({ ...user, content: 'x', category: 'nonsense' as never }), 'invalid_request');
    await expectError(service.store({ ...user, content: 'x', type: 'OTHER' as never }), 'invalid_request');
    await expectError(service.update({ ...user, id: 'nope', content: 'y' }), 'not_found');
    const other = await service.store({ ...user, pool: 'other', content: 'elsewhere' });
    await expectError(service.get({ pool: 'team', id: other.id }), 'not_found');
    await expectError(service.delete({ ...user, id: other.id }), 'not_found');
    expect((await service.stats({})).lastSeq).toBe(1);
  });

  it('makes store idempotent for a caller-chosen id', async () => {
    const [first, second] = await Promise.all([
      service.store({ ...user, id: 'job-123-a', content: 'once' }),
      service.store({ ...user, id: 'job-123-a', content: 'once' }),
    ]);
    expect(second).toEqual(first);
    expect((await service.stats({})).lastSeq).toBe(1);
    await expectError(service.store({ ...user, pool: 'other', id: 'job-123-a', content: 'x' }), 'conflict');
  });

  it('searches with any text, excludes archived entries, and records references in the background', async () => {
    const docker = await service.store({ ...user, content: 'Docker networking breaks on macOS', category: 'gotcha' });
    const zsh = await service.store({ ...user, content: 'uses zsh with oh-my-zsh', category: 'environment' });
    const old = await service.store({ ...user, content: 'old docker setup', category: 'project' });
    await service.archive({ ...user, id: old.id });
    const hits = await service.search({ pool: 'team', query: 'docker', recordReference: true, requestId: 'req-1' });
    expect(hits.map((hit) => hit.entry.id)).toEqual([docker.id]);
    for (const query of ['', '"', 'AND OR NOT', 'NEAR(', '🎉', '*', 'col:x', "it's"]) {
      expect(Array.isArray(await service.search({ pool: 'team', query }))).toBe(true);
    }
    expect((await service.search({ pool: 'team', query: '' })).map((hit) => hit.entry.id).sort()).toEqual([docker.id, zsh.id].sort());
    await service.close();
    service = await open();
    expect(await service.get({ pool: 'team', id: docker.id })).toMatchObject({ referenceCount: 1, lastReferenced: now.toISOString() });
    const events = await service.eventsAfter({ after: 0 });
    expect(events.at(-1)).toMatchObject({ type: 'memory.referenced', causationId: 'req-1', actor: 'llm', data: { ids: [docker.id] } });
  });

  it('ranks the more confident of two equally relevant entries first', async () => {
    const weak = await service.store({ ...user, content: 'deploy with docker compose', category: 'project', confidence: 0.4 });
    const strong = await service.store({ ...user, content: 'deploy with docker compose', category: 'project', confidence: 1 });
    const hits = await service.search({ pool: 'team', query: 'docker compose' });
    expect(hits.map((hit) => hit.entry.id)).toEqual([strong.id, weak.id]);
    expect(hits[0]?.effectiveConfidence).toBeCloseTo(1, 5);
    expect(hits[0]?.score).toBe(hits[1]?.score);
  });

  it('soft-deletes and restores; purge forgets content in db, flat files and log', async () => {
    const secret = await service.store({ ...user, content: 'the password is hunter2', category: 'environment' });
    const kept = await service.store({ ...user, content: 'kept fact', category: 'project' });
    await service.delete({ ...user, id: secret.id, reason: 'wrong' });
    expect(await service.search({ pool: 'team', query: 'password' })).toEqual([]);
    expect(await service.list({ pool: 'team' })).toHaveLength(1);
    await service.restore({ ...user, id: secret.id });
    expect(await service.search({ pool: 'team', query: 'password' })).toHaveLength(1);
    const memoryMd = join(dir.path, 'pools', 'team', 'MEMORY.md');
    expect(readFileSync(memoryMd, 'utf8')).toContain('hunter2');
    expect(logText()).toContain('hunter2');

    expect(await service.purge({ ...user, id: secret.id })).toEqual({ id: secret.id, purged: true });
    await expectError(service.get({ pool: 'team', id: secret.id }), 'not_found');
    expect(await service.search({ pool: 'team', query: 'password hunter2' })).toEqual([]);
    expect(readFileSync(memoryMd, 'utf8')).not.toContain('hunter2');
    expect(readFileSync(memoryMd, 'utf8')).toContain(`[id:${kept.id}] (project) kept fact`);
    expect(logText()).not.toContain('hunter2');
    expect(logText()).toContain('"t":"purged"');
    await service.close();
    for (const file of readdirSync(dir.path).filter((name) => name.startsWith('engram.db'))) {
      expect(readFileSync(join(dir.path, file)).includes('hunter2')).toBe(false);
    }
    service = await open();
    expect(await service.list({ pool: 'team' })).toHaveLength(1);
  });

  it('consolidates: a new entry supersedes archived ones; refuses unknown or archived ids', async () => {
    const a = await service.store({ ...user, content: 'likes short answers', category: 'preference' });
    const b = await service.store({ ...user, content: 'wants concise replies', category: 'preference' });
    const c = await service.store({ ...user, content: 'archived', category: 'preference' });
    await service.archive({ ...user, id: c.id });
    await expectError(
      service.consolidate({
        ...user,
        actor: 'worker:consolidation',
        model: 'off',
        merges: [{ content: 'x', type: 'USER', category: 'preference', supersedes: [a.id, c.id] }],
      }),
      'invalid_request',
    );
    await expectError(
      service.consolidate({ ...user, model: 'off', merges: [{ content: 'x', type: 'USER', category: 'preference', supersedes: ['unknown1'] }] }),
      'not_found',
    );
    const result = await service.consolidate({
      ...user,
      actor: 'worker:consolidation',
      model: 'off',
      merges: [{ content: 'prefers concise answers', type: 'USER', category: 'preference', supersedes: [a.id, b.id] }],
    });
    expect(result.archived).toEqual([a.id, b.id]);
    expect(result.created[0]).toMatchObject({ content: 'prefers concise answers', supersedes: [a.id, b.id], source: 'consolidation' });
    expect(await service.get({ pool: 'team', id: a.id })).toMatchObject({ isArchived: true, supersededBy: result.created[0]?.id });
    expect(service.activeCount('team')).toBe(1);
  });

  it('builds a deterministic Tier 1 block and answers stats, events and ping', async () => {
    const pref = await service.store({ ...user, content: 'answers in French', category: 'preference' });
    await service.store({ ...user, content: 'chose Postgres', category: 'decision' });
    const first = await service.tier1({ pool: 'team' });
    expect(first.ids).toEqual([pref.id]);
    expect(first.block).toContain(`[id:${pref.id}] answers in French`);
    expect(first.block.length).toBeLessThanOrEqual(400);
    now = new Date('2026-05-01T20:00:00.000Z');
    expect((await service.tier1({ pool: 'team' })).block).toBe(first.block);
    expect(await service.ping({})).toEqual({ ok: true, lastSeq: 2, diskFull: null });
    expect((await service.eventsAfter({ after: 1 })).map((event) => event.seq)).toEqual([2]);
    expect((await service.stats({})).pools).toEqual([
      { pool: 'team', active: 2, archived: 0, byCategory: { preference: 1, decision: 1 }, lastSeq: 2, lastChangedAt: '2026-05-01T12:00:00.000Z' },
    ]);
  });

  it('tells committed events to listeners in seq order and keeps the outbox cursor', async () => {
    const seen: number[] = [];
    service.commits.subscribe((events) => seen.push(...events.map((event) => event.seq)));
    await Promise.all(Array.from({ length: 20 }, (_, i) => service.store({ ...user, content: `fact ${i}` })));
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    service.markDispatched(12);
    await service.close();
    service = await open();
    expect(service.dispatchedSeq()).toBe(12);
  });

  it('lets only one writer open a data dir', async () => {
    await expect(open()).rejects.toBeInstanceOf(DataDirLockedError);
    expect(existsSync(join(dir.path, 'engram.lock'))).toBe(true);
  });
});

describe('flat files follow every change', () => {
  it('match a fresh render after stores, updates, retyping, archive and restore', async () => {
    const read = (file: string) => readFileSync(join(dir.path, 'pools', 'team', file), 'utf8');
    const tick = () => (now = new Date(now.getTime() + 1000));
    const a = await service.store({ ...user, content: 'first fact', category: 'project' });
    tick();
    const b = await service.store({ ...user, content: 'likes tea', category: 'preference' });
    tick();
    const c = await service.store({ ...user, content: 'third fact', category: null });
    tick();
    for (const content of ['x one', 'x two', 'x three']) {
      await service.store({ ...user, content, category: 'project' });
      tick();
    }
    const memories = (await service.list({ pool: 'team', type: 'MEMORY' })).reverse();
    expect(read('MEMORY.md')).toBe(renderFlatFile('team', 'MEMORY', memories));
    await service.update({ ...user, id: a.id, content: 'first fact, edited' });
    await service.archive({ ...user, id: a.id });
    await service.update({ ...user, id: c.id, type: 'USER' });
    await service.restore({ ...user, id: a.id });
    const live = { memory: read('MEMORY.md'), user: read('USER.md') };
    expect(live.memory).toContain(`[id:${a.id}] (project) first fact, edited`);
    expect(live.memory).not.toContain(c.id);
    expect(live.user.indexOf(b.id)).toBeLessThan(live.user.indexOf(c.id));
    await service.close();
    service = await open();
    expect({ memory: read('MEMORY.md'), user: read('USER.md') }).toEqual(live);
  });
});
