import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { silentLogger, startPostgres, tempDataDir, type TestDatabase, type TestPostgres } from '@engram/testing';
import { checkEventStoreTable, copyLogToTable, copyTableToLog } from './event-store-tools.js';
import { openMemoryService } from './open-memory-service.js';
import { verifyDataDir } from './rebuild.js';

let server: TestPostgres;
let database: TestDatabase;
let dir: ReturnType<typeof tempDataDir>;

beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  database = await server.database();
  dir = tempDataDir();
});
afterEach(async () => {
  await database.drop();
  dir.remove();
});

const user = { actor: 'user' as const, pool: 'team' };

describe('engram log copy and verify with a PostgreSQL event store', () => {
  it('moves a home server log into PostgreSQL and back, event by event, and a replica on the table holds the same memory', async () => {
    const home = join(dir.path, 'home');
    const service = await openMemoryService({ dataDir: home, tier1MaxChars: 400, logger: silentLogger() });
    const stored = [];
    for (let i = 0; i < 30; i++) stored.push(await service.store({ ...user, content: `fact number ${i}` }));
    await service.update({ ...user, id: stored[0]!.id, content: 'fact number zero' });
    const before = await service.list({ pool: 'team', limit: 100 });
    await service.close();

    const intoTable = await copyLogToTable(home, database.url, silentLogger());
    expect(intoTable.events).toBe(31);
    // Into an empty table only: a second copy is refused.
    await expect(copyLogToTable(home, database.url, silentLogger())).rejects.toThrow(/already holds 31 events/);

    const replicaDir = join(dir.path, 'replica');
    const replica = await openMemoryService({ dataDir: replicaDir, tier1MaxChars: 400, logger: silentLogger(), eventStore: { url: database.url } });
    expect(await replica.list({ pool: 'team', limit: 100 })).toEqual(before);
    await replica.store({ ...user, content: 'written on the replica' });
    await replica.close();
    expect(await checkEventStoreTable(replicaDir, database.url, silentLogger())).toEqual({ ok: true, problems: [], rows: 32 });
    expect((await verifyDataDir(replicaDir, silentLogger())).ok).toBe(true);

    const back = join(dir.path, 'back');
    expect(await copyTableToLog(database.url, join(back, 'events'), silentLogger())).toEqual({ events: 32, lastSeq: 32 });
    const again = await openMemoryService({ dataDir: back, tier1MaxChars: 400, logger: silentLogger() });
    expect((await again.list({ pool: 'team', limit: 100 })).map((entry) => entry.content)).toContain('written on the replica');
    await again.close();
    expect((await verifyDataDir(back, silentLogger())).ok).toBe(true);
  });

  it('verify names a row changed behind its back', async () => {
    const replicaDir = join(dir.path, 'replica');
    const replica = await openMemoryService({ dataDir: replicaDir, tier1MaxChars: 400, logger: silentLogger(), eventStore: { url: database.url } });
    await replica.store({ ...user, content: 'the staging server runs Debian 12' });
    await replica.close();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query("UPDATE events SET body = replace(body, 'Debian 12', 'Debian 13') WHERE seq = 1");
    await client.end();
    const check = await checkEventStoreTable(replicaDir, database.url, silentLogger());
    expect(check.ok).toBe(false);
    expect(check.problems.join('\n')).toMatch(/seq 1: checksum mismatch/);
  });
});
