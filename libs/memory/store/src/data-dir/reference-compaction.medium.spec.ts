import { copyFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { MemoryEntry } from '@engram/domain';
import type { EventLogOptions } from '../event-log/event-log.js';
import { openMemoryService } from './open-memory-service.js';
import { compactDataDir, verifyDataDir } from './rebuild.js';
import { silentLogger, tempDataDir } from '@engram/testing';

let dir: ReturnType<typeof tempDataDir>;
beforeEach(() => {
  dir = tempDataDir();
});
afterEach(() => dir.remove());

let now = Date.parse('2026-03-01T00:00:00.000Z');
const open = (autoCompact: EventLogOptions['autoCompact'] | null = null) =>
  openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger: silentLogger(), clock: () => new Date((now += 60_000)), autoCompact });
const logBytes = () => readdirSync(join(dir.path, 'events')).reduce((sum, name) => sum + statSync(join(dir.path, 'events', name)).size, 0);

async function storeThree(): Promise<MemoryEntry[]> {
  const service = await open();
  const entries = await Promise.all(
    ['deploys go through the staging cluster first', 'the user writes tests before code', 'postgres runs on port 5433 here'].map((content) =>
      service.store({ pool: 'team', actor: 'user', content, category: 'project' }),
    ),
  );
  await service.close();
  return entries;
}

describe('references summed in the log', () => {
  it('keeps the log from growing with every use: past its size the service sums references, and the database still equals replay(log)', async () => {
    const [first, second] = await storeThree();
    const service = await open({ minReferenceBytes: 4_000, shareOfRest: 0.5 });
    for (let i = 0; i < 120; i += 1)
      await service.refresh({ pool: 'team', actor: 'llm', ids: [first?.id ?? '', ...(i % 3 === 0 ? [second?.id ?? ''] : [])] });
    await service.close();

    expect(logBytes()).toBeLessThan(12_000); // 120 reference events alone are ~40 kB
    expect(await verifyDataDir(dir.path, silentLogger())).toMatchObject({ ok: true, problems: [] });
    const reopened = await open();
    expect(await reopened.get({ pool: 'team', id: first?.id ?? '' })).toMatchObject({ referenceCount: 120 });
    expect(await reopened.get({ pool: 'team', id: second?.id ?? '' })).toMatchObject({ referenceCount: 40 });
    // The entry's history shows the sum, which says how many references it stands for.
    const history = await reopened.events({ pool: 'team', memoryId: first?.id ?? '', limit: 1000 });
    const summed = history.data.filter((event) => event.type === 'memory.referenced' && event.data.counts !== undefined);
    expect(summed.length).toBeGreaterThan(0);
    expect(history.data.filter((event) => event.type === 'memory.referenced').length).toBeLessThan(120);
    await reopened.close();
  });

  it('engram compact sums a log written before summing existed, and replay of it gives the same database', async () => {
    const [first] = await storeThree();
    const service = await open();
    for (let i = 0; i < 50; i += 1) await service.refresh({ pool: 'team', actor: 'llm', ids: [first?.id ?? ''] });
    const before = await service.list({ pool: 'team', limit: 10 });
    await service.close();
    const bytes = logBytes();

    const result = await compactDataDir(dir.path, silentLogger());

    expect(result).toMatchObject({ removed: 49, summaries: 1, bytesBefore: bytes });
    expect(logBytes()).toBeLessThan(bytes / 4);
    expect(await verifyDataDir(dir.path, silentLogger())).toMatchObject({ ok: true });
    const reopened = await open();
    expect(await reopened.list({ pool: 'team', limit: 10 })).toEqual(before);
    await reopened.close();
  });

  it('rebuilds at start a database that had applied references the log now sums after it', async () => {
    const [first] = await storeThree();
    let service = await open();
    for (let i = 0; i < 10; i += 1) await service.refresh({ pool: 'team', actor: 'llm', ids: [first?.id ?? ''] });
    await service.close();
    copyFileSync(join(dir.path, 'engram.db'), join(dir.path, 'older.db'));
    service = await open();
    for (let i = 0; i < 10; i += 1) await service.refresh({ pool: 'team', actor: 'llm', ids: [first?.id ?? ''] });
    await service.close();
    await compactDataDir(dir.path, silentLogger());
    // An older copy of the database comes back (a person restoring a file): it stops inside the summed references.
    copyFileSync(join(dir.path, 'older.db'), join(dir.path, 'engram.db'));

    service = await open();
    expect(await service.get({ pool: 'team', id: first?.id ?? '' })).toMatchObject({ referenceCount: 20 });
    await service.close();
    expect(await verifyDataDir(dir.path, silentLogger())).toMatchObject({ ok: true });
  });
});
