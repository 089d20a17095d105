import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '@engram/testing';
import { postgresPerTest } from '../testing/postgres-per-test.js';
import { checkEventStoreTable, copyLogToTable, copyTableToLog } from './event-store-tools.js';
import { openMemoryService } from './open-memory-service.js';
import { compactDataDir, verifyDataDir } from './rebuild.js';

const postgres = postgresPerTest();

const user = { actor: 'user' as const, pool: 'team' };

describe('engram log copy and verify with a PostgreSQL event store', () => {
  it('moves a home server log into PostgreSQL and back, event by event, and a replica on the table holds the same memory', async () => {
    const home = join(postgres.dir, 'home');
    const service = await openMemoryService({ dataDir: home, tier1MaxChars: 400, logger: silentLogger() });
    const stored = [];
    for (let i = 0; i < 30; i++) stored.push(await service.store({ ...user, content: `fact number ${i}` }));
    await service.update({ ...user, id: stored[0]!.id, content: 'fact number zero' });
    const before = await service.list({ pool: 'team', limit: 100 });
    await service.close();

    const intoTable = await copyLogToTable(home, postgres.database.url, silentLogger());
    expect(intoTable).toEqual({ events: 31, lastSeq: 31, renumbered: false });
    // Into an empty table only: a second copy is refused.
    await expect(copyLogToTable(home, postgres.database.url, silentLogger())).rejects.toThrow(/already holds 31 events/);

    const replicaDir = join(postgres.dir, 'replica');
    const replica = await postgres.memoryReplica('replica');
    expect(await replica.list({ pool: 'team', limit: 100 })).toEqual(before);
    await replica.store({ ...user, content: 'written on the replica' });
    await postgres.close(replica);
    expect(await checkEventStoreTable(replicaDir, postgres.database.url, silentLogger())).toEqual({ ok: true, problems: [], rows: 32 });
    expect((await verifyDataDir(replicaDir, silentLogger())).ok).toBe(true);

    const back = join(postgres.dir, 'back');
    expect(await copyTableToLog(postgres.database.url, join(back, 'events'), silentLogger())).toEqual({ events: 32, lastSeq: 32 });
    const again = await openMemoryService({ dataDir: back, tier1MaxChars: 400, logger: silentLogger() });
    expect((await again.list({ pool: 'team', limit: 100 })).map((entry) => entry.content)).toContain('written on the replica');
    await again.close();
    expect((await verifyDataDir(back, silentLogger())).ok).toBe(true);
  });

  it('closes up the gaps compaction left in a log, and says the data dir is then no copy of the table, which a replica on it refuses', async () => {
    const home = join(postgres.dir, 'home');
    const service = await openMemoryService({ dataDir: home, tier1MaxChars: 400, logger: silentLogger(), autoCompact: null });
    const [first, second] = [
      await service.store({ ...user, content: 'the CI runs on a Raspberry Pi 5' }),
      await service.store({ ...user, content: 'deploys go through staging' }),
    ];
    for (let i = 0; i < 20; i++) await service.refresh({ pool: 'team', actor: 'llm', ids: [first!.id] });
    await service.store({ ...user, content: 'the staging server runs Debian 12' });
    const before = await service.list({ pool: 'team', limit: 100 });
    await service.close();
    expect((await compactDataDir(home, silentLogger())).removed).toBeGreaterThan(0);

    const copied = await copyLogToTable(home, postgres.database.url, silentLogger());
    expect(copied.renumbered).toBe(true);
    expect(copied.lastSeq).toBe(copied.events);
    await expect(
      openMemoryService({ dataDir: home, tier1MaxChars: 400, logger: silentLogger(), eventStore: { url: postgres.database.url } }),
    ).rejects.toThrow(/holds events up to seq \d+ that the event store .* does not have/);
    const replica = await postgres.memoryReplica('replica');
    expect(await replica.list({ pool: 'team', limit: 100 })).toEqual(before);
    expect((await replica.get({ pool: 'team', id: first!.id })).referenceCount).toBe(20);
    expect((await replica.get({ pool: 'team', id: second!.id })).content).toBe('deploys go through staging');
  });

  it('verify names a row changed behind its back', async () => {
    const replicaDir = join(postgres.dir, 'replica');
    const replica = await postgres.memoryReplica('replica');
    await replica.store({ ...user, content: 'the staging server runs Debian 12' });
    await postgres.close(replica);
    await postgres.database.query("UPDATE events SET body = replace(body, 'Debian 12', 'Debian 13') WHERE seq = 1");
    const check = await checkEventStoreTable(replicaDir, postgres.database.url, silentLogger());
    expect(check.ok).toBe(false);
    expect(check.problems.join('\n')).toMatch(/seq 1: checksum mismatch/);
  });
});
