import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { MemoryError } from '@engram/contracts';
import type { MemoryEvent } from '@engram/domain';
import { memoryServicePerTest, TEST_START } from '../testing/memory-service-per-test.js';

const DAY = 86_400_000;
const daysLater = (days: number) => new Date(Date.parse(TEST_START) + days * DAY);
const sweeper = { actor: 'worker:decay' as const, causationId: 'job-1' };

describe('MemoryService.decaySweep on a real data dir', () => {
  const memory = memoryServicePerTest();
  const store = (content: string, category: 'project' | 'gotcha', pool = 'team') => memory.service.store({ pool, actor: 'user', content, category });

  it('archives the decayed entries of the pool in one batch of events, and the flat file no longer lists them', async () => {
    const stale = await Promise.all(Array.from({ length: 30 }, (_, i) => store(`stale project fact ${i}`, 'project')));
    const gotcha = await store('The CI cache goes stale on Mondays', 'gotcha');
    const elsewhere = await store('a stale fact of another pool', 'project', 'other');
    const batches: MemoryEvent[][] = [];
    memory.service.commits.subscribe((events) => batches.push([...events]));

    // 30 days on: 0.95^30 = 0.21 < 0.3 archives the project facts; 0.98^30 = 0.55 keeps the gotcha.
    const asOf = daysLater(30).toISOString();
    const swept = await memory.service.decaySweep({ pool: 'team', asOf, ...sweeper });

    expect(swept).toEqual({ pool: 'team', asOf, examined: 31, archived: expect.arrayContaining(stale.map((entry) => entry.id)) });
    expect(swept.archived).toHaveLength(30);
    expect(batches).toHaveLength(1);
    expect(batches[0]).toHaveLength(30);
    expect(batches[0]?.every((event) => event.type === 'memory.archived' && event.actor === 'worker:decay' && event.causationId === 'job-1')).toBe(
      true,
    );
    expect(batches[0]?.[0]?.data).toMatchObject({ reason: `decayed: effective confidence 0.215 < 0.3 at ${asOf}` });
    const flat = readFileSync(join(memory.dataDir, 'pools', 'team', 'MEMORY.md'), 'utf8');
    expect(flat).toContain(gotcha.content);
    expect(flat).not.toContain('stale project fact');
    expect((await memory.service.get({ pool: 'other', id: elsewhere.id })).isArchived).toBe(false);
    expect((await memory.service.list({ pool: 'team', archived: true, limit: 100 })).map((entry) => entry.id).sort()).toEqual(
      stale.map((entry) => entry.id).sort(),
    );
  });

  it('evaluates at the service clock when no time is given, and a second sweep writes nothing', async () => {
    await store('old fact', 'project');
    memory.now = daysLater(30);
    const first = await memory.service.decaySweep({ pool: 'team', ...sweeper });
    expect(first).toMatchObject({ asOf: daysLater(30).toISOString(), examined: 1, archived: [expect.any(String)] });
    const lastSeq = (await memory.service.stats({})).lastSeq;
    expect(await memory.service.decaySweep({ pool: 'team', ...sweeper })).toMatchObject({ examined: 0, archived: [] });
    expect((await memory.service.stats({})).lastSeq).toBe(lastSeq);
  });

  it('counts a search made just before the sweep as a use', async () => {
    const used = await store('The deploy script lives in ops', 'project');
    await store('An unrelated stale fact', 'project');
    memory.now = daysLater(30);
    await memory.service.search({ pool: 'team', query: 'deploy script', recordReference: true });
    const swept = await memory.service.decaySweep({ pool: 'team', ...sweeper });
    expect(swept.examined).toBe(2);
    expect(swept.archived).not.toContain(used.id);
    expect(swept.archived).toHaveLength(1);
  });

  it('decides against writes still in flight: an entry being archived is not archived twice', async () => {
    const entry = await store('old fact', 'project');
    await store('another old fact', 'project');
    const archiving = memory.service.archive({ pool: 'team', id: entry.id, actor: 'user' });
    const swept = await memory.service.decaySweep({ pool: 'team', asOf: daysLater(40).toISOString(), ...sweeper });
    await archiving;
    expect(swept).toMatchObject({ examined: 1, archived: [expect.not.stringMatching(entry.id)] });
    const archivedEvents = (await memory.service.eventsAfter({ after: 0 })).filter((event) => event.type === 'memory.archived');
    expect(archivedEvents.filter((event) => event.data.id === entry.id)).toHaveLength(1);
  });

  it('keeps them archived across a restart', async () => {
    const entry = await store('old fact', 'project');
    await memory.service.decaySweep({ pool: 'team', asOf: daysLater(40).toISOString(), ...sweeper });
    const reopened = await memory.reopen();
    expect((await reopened.get({ pool: 'team', id: entry.id })).isArchived).toBe(true);
  });

  it('refuses a time it cannot read, as the caller’s mistake', async () => {
    await expect(memory.service.decaySweep({ pool: 'team', asOf: 'yesterday', ...sweeper })).rejects.toEqual(
      new MemoryError('invalid_request', 'asOf: must be an ISO-8601 time'),
    );
  });
});
