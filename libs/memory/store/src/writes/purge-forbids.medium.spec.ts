import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '@engram/testing';
import { replayDataDir, verifyDataDir } from '../data-dir/rebuild.js';
import { memoryServicePerTest } from '../testing/memory-service-per-test.js';

const memory = memoryServicePerTest();
const person = { actor: 'user' as const, pool: 'team' };
const extractor = { actor: 'worker:extract' as const, pool: 'team', source: 'marker' as const };

const logText = (dataDir: string): string =>
  readdirSync(join(dataDir, 'events'))
    .filter((name) => name.endsWith('.ndjson'))
    .map((name) => readFileSync(join(dataDir, 'events', name), 'utf8'))
    .join('');

describe('a purged id stays purged (Idempotency-Key retries)', () => {
  it('answers a retry of the purged store as gone, also after a restart and a replay; the database agrees with the log', async () => {
    const request = { ...person, content: 'the user secret is W', idempotencyKey: 'K', idempotencyKeyBindsRequest: true };
    const first = await memory.service.store(request);
    await memory.service.purge({ ...person, id: first.id });

    await expect(memory.service.store(request)).rejects.toMatchObject({ code: 'gone', message: expect.stringContaining(first.id) });
    await expect(memory.service.get({ pool: 'team', id: first.id })).rejects.toMatchObject({ code: 'not_found' });
    expect(await memory.service.search({ pool: 'team', query: 'secret' })).toEqual([]);

    await memory.reopen();
    await expect(memory.service.store(request)).rejects.toMatchObject({ code: 'gone' });
    await memory.service.close();
    await replayDataDir(memory.dataDir, silentLogger());
    expect((await verifyDataDir(memory.dataDir, silentLogger())).ok).toBe(true);
    await memory.reopen();
    await expect(memory.service.store(request)).rejects.toMatchObject({ code: 'gone' });
    expect(await memory.service.list({ pool: 'team' })).toEqual([]);
    expect(logText(memory.dataDir)).not.toContain('secret is W');
    // A new key is a new request: the person may store the text again, as a new entry.
    const again = await memory.service.store({ ...request, idempotencyKey: 'K2' });
    expect(again.id).not.toBe(first.id);
  });

  it('refuses a retry that arrives while the purge is still being written', async () => {
    const request = { ...person, content: 'deploy key is hunter2', idempotencyKey: 'race' };
    const first = await memory.service.store(request);
    const [purged, retried] = await Promise.allSettled([memory.service.purge({ ...person, id: first.id }), memory.service.store(request)]);
    expect(purged.status).toBe('fulfilled');
    expect(retried).toMatchObject({ status: 'rejected', reason: { code: 'gone' } });
    expect(await memory.service.list({ pool: 'team' })).toEqual([]);
  });
});

describe('a purge forbids its texts to stores from a conversation', () => {
  it('refuses the purged text to extraction, markers and the model in that pool, in any spelling, in whatever order they come', async () => {
    const entry = await memory.service.store({ ...person, content: 'The user secret is W' });
    await memory.service.update({ ...person, id: entry.id, content: 'The user secret is W (rotated monthly)' });
    // An extraction that came before the purge stored nothing of it: it refreshed the person's entry.
    await memory.service.purge({ ...person, id: entry.id });

    for (const [content, source] of [
      ['the user secret is W', 'marker'],
      ['The user secret is w.', 'extraction'],
      ['THE USER SECRET IS W', 'llm'],
      ['The user secret is W (rotated monthly)', 'marker'],
    ] as const) {
      await expect(memory.service.store({ ...extractor, id: `ext-${source}-${content.length}`, content, source })).rejects.toMatchObject({
        code: 'gone',
      });
    }
    // Another pool never had it; a person may store it again on purpose.
    await expect(memory.service.store({ ...extractor, pool: 'other', content: 'the user secret is W' })).resolves.toMatchObject({ pool: 'other' });
    await expect(memory.service.store({ ...person, content: 'the user secret is W' })).resolves.toMatchObject({ pool: 'team' });
    await memory.service.close();
    await replayDataDir(memory.dataDir, silentLogger());
    await memory.reopen();
    await expect(memory.service.store({ ...extractor, content: 'the user secret is W' })).rejects.toMatchObject({ code: 'gone' });
    // The log keeps fingerprints, never the text.
    expect(logText(memory.dataDir)).not.toMatch(/rotated monthly/);
  });
});

describe('a database from before purge tombstones', () => {
  it('records the purges of its log at start and drops an entry a retry stored again under a purged id', async () => {
    const request = { ...person, content: 'the user secret is W', idempotencyKey: 'legacy' };
    const first = await memory.service.store(request);
    await memory.service.purge({ ...person, id: first.id });
    await memory.service.close();
    // As the database of a version without tombstones holds it: no tombstones, and the entry stored again.
    const db = new Database(join(memory.dataDir, 'engram.db'));
    db.exec("DELETE FROM purged_ids; DELETE FROM purged_texts; UPDATE meta SET value = 0 WHERE key = 'tombstones_seq'");
    db.prepare(
      `INSERT INTO memories (id, pool, type, category, content, confidence, created_at, updated_at, source)
       VALUES (?, 'team', 'MEMORY', NULL, 'the user secret is W', 1, '2026-05-01T12:00:00.000Z', '2026-05-01T12:00:00.000Z', 'user')`,
    ).run(first.id);
    db.close();

    await memory.reopen();
    expect(await memory.service.list({ pool: 'team' })).toEqual([]);
    await expect(memory.service.store(request)).rejects.toMatchObject({ code: 'gone' });
    expect(readFileSync(join(memory.dataDir, 'pools', 'team', 'MEMORY.md'), 'utf8')).not.toContain('secret');
  });
});
