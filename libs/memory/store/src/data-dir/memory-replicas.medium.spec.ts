import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '@engram/testing';
import { postgresPerTest } from '../testing/postgres-per-test.js';
import { checkEventStoreTable } from './event-store-tools.js';
import { verifyDataDir } from './rebuild.js';

/** Two memory processes' services on one PostgreSQL event store, each with its own data dir (ENGRAM_EVENT_STORE). */
const postgres = postgresPerTest();
const replica = (name: string) => postgres.memoryReplica(name);

const user = { actor: 'user' as const, pool: 'team' };

describe('memory replicas on one PostgreSQL event store', () => {
  it('shows a write acknowledged by one replica to a read through the other at once (read-your-writes)', async () => {
    const a = await replica('a');
    const b = await replica('b');
    for (let i = 0; i < 5; i++) {
      const stored = await a.store({ ...user, content: `the build server number ${i} is called hopper` });
      expect((await b.get({ pool: 'team', id: stored.id })).content).toBe(stored.content);
      expect((await b.search({ pool: 'team', query: `build server number ${i}` })).map((hit) => hit.entry.id)).toContain(stored.id);
    }
    expect((await b.list({ pool: 'team' })).map((entry) => entry.id)).toEqual((await a.list({ pool: 'team' })).map((entry) => entry.id));
  });

  it('keeps one entry when two replicas store the same fact at once with dedupe on', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const [first, second] = await Promise.all([
      a.store({ ...user, content: 'The CI runs on a Raspberry Pi 5.', dedupe: true }),
      b.store({ ...user, content: 'the ci runs on a raspberry PI 5', dedupe: true }),
    ]);
    expect(second.id).toBe(first.id);
    expect(await a.list({ pool: 'team' })).toHaveLength(1);
    expect(await b.list({ pool: 'team' })).toHaveLength(1);
  });

  it('keeps one entry a fact however the two stores of it interleave with the replicas following each other', async () => {
    const a = await replica('a');
    const b = await replica('b');
    // Each round races one fact through both replicas, amid other writes, so that one store's decision
    // meets the other's event at every point of its way (queued, pulled in, committing).
    for (let round = 0; round < 25; round++) {
      const fact = `the deploy key of service ${round} is rotated monthly`;
      const [first, second] = await Promise.all([
        a.store({ ...user, content: fact, dedupe: true }),
        b.store({ ...user, content: fact.toUpperCase(), dedupe: true }),
        round % 2 === 0
          ? b.store({ ...user, pool: 'home', content: `noise ${round}` })
          : a.store({ ...user, pool: 'home', content: `noise ${round}` }),
      ]);
      expect(second.id).toBe(first.id);
    }
    for (const service of [a, b]) expect(await service.list({ pool: 'team', limit: 100 })).toHaveLength(25);
  });

  it('acknowledges every one of many concurrent writes spread over both replicas, each once, and both end equal', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const stored = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        (i % 2 === 0 ? a : b).store({ ...user, pool: i % 3 === 0 ? 'team' : 'home', content: `fact number ${i}` }),
      ),
    );
    const first = stored[0]!;
    // Both replicas update the same entry at once: each is decided on the other's result, none is lost or refused.
    await Promise.all([a.update({ ...user, id: first.id, category: 'project' }), b.update({ ...user, id: first.id, content: 'fact number zero' })]);
    for (const service of [a, b]) {
      const ids = [...(await service.list({ pool: 'team', limit: 100 })), ...(await service.list({ pool: 'home', limit: 100 }))].map(
        (entry) => entry.id,
      );
      expect(ids.sort()).toEqual(stored.map((entry) => entry.id).sort());
      expect(await service.get({ pool: 'team', id: first.id })).toMatchObject({ category: 'project', content: 'fact number zero' });
    }
    expect(await postgres.database.query("SELECT count(*) AS n FROM events WHERE type = 'memory.stored'")).toEqual([{ n: '120' }]);
  });

  it('builds a replica whose database was deleted, or whose data dir is new, from the table at start', async () => {
    const a = await replica('a');
    const kept = await a.store({ ...user, content: 'the staging server runs Debian 12' });
    const b = await replica('b');
    expect((await b.get({ pool: 'team', id: kept.id })).content).toBe(kept.content);
    await postgres.close(b);
    for (const suffix of ['', '-wal', '-shm']) rmSync(join(postgres.dir, 'b', 'engram.db') + suffix, { force: true });
    const rebuilt = await replica('b');
    expect((await rebuilt.get({ pool: 'team', id: kept.id })).content).toBe(kept.content);
  });

  it('copies again at start the tail its copy of the table lost in a power cut, though its database had applied it', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const stored = [];
    for (let i = 0; i < 6; i++) stored.push(await a.store({ ...user, content: `the build server number ${i} is called hopper` }));
    expect(await b.list({ pool: 'team', limit: 100 })).toHaveLength(6);
    await postgres.close(b);
    // What a power cut leaves of appends the kernel had not written out: two lines and a half of six.
    const events = join(postgres.dir, 'b', 'events');
    const segment = join(
      events,
      readdirSync(events).find((name) => name.endsWith('.ndjson'))!,
    );
    const lines = readFileSync(segment, 'utf8').split('\n');
    expect(lines).toHaveLength(7);
    writeFileSync(segment, `${lines.slice(0, 2).join('\n')}\n${lines[2]!.slice(0, 40)}`);
    const meanwhile = await a.store({ ...user, content: 'the staging server runs Debian 12' });

    const restarted = await replica('b');
    for (const entry of [...stored, meanwhile]) expect((await restarted.get({ pool: 'team', id: entry.id })).content).toBe(entry.content);
    await postgres.close(restarted);
    expect(await checkEventStoreTable(join(postgres.dir, 'b'), postgres.database.url, silentLogger())).toEqual({ ok: true, problems: [], rows: 7 });
    expect(await verifyDataDir(join(postgres.dir, 'b'), silentLogger())).toMatchObject({ ok: true, lastSeq: 7, memories: 7 });
  });

  it('purges everywhere: the table and every replica forget the text', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const secret = await a.store({ ...user, content: 'the door code is 4711' });
    await b.store({ ...user, content: 'the user likes green tea' });
    expect((await b.get({ pool: 'team', id: secret.id })).content).toContain('4711');
    await b.purge({ ...user, id: secret.id });
    await expect(a.get({ pool: 'team', id: secret.id })).rejects.toMatchObject({ code: 'not_found' });
    expect(await postgres.database.query("SELECT count(*) AS n FROM events WHERE body LIKE '%4711%'")).toEqual([{ n: '0' }]);
    await postgres.close(a);
    await postgres.close(b);
    for (const name of ['a', 'b']) {
      const events = join(postgres.dir, name, 'events');
      const text = readdirSync(events)
        .map((file) => readFileSync(join(events, file), 'utf8'))
        .join('');
      expect(text).not.toContain('4711');
      expect(text).toContain('green tea');
    }
  });
});
