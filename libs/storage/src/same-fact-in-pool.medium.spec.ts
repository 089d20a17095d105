import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { MemoryService } from './memory-service.js';
import { openMemoryService } from './open-memory-service.js';
import { silentLogger, tempDataDir } from './testing/temp-data-dir.js';

let dir: ReturnType<typeof tempDataDir>;
let service: MemoryService;
let now = new Date('2026-05-01T12:00:00.000Z');
const llm = { actor: 'llm' as const, pool: 'team' };

beforeEach(async () => {
  dir = tempDataDir();
  now = new Date('2026-05-01T12:00:00.000Z');
  service = await openMemoryService({ dataDir: dir.path, tier1MaxChars: 400, logger: silentLogger(), clock: () => now });
});
afterEach(async () => {
  await service.close();
  dir.remove();
});

describe('store with dedupe: no second copy of a fact', () => {
  it('answers the entry that already says it, records a reference to it, and keeps it confirmed', async () => {
    const first = await service.store({ ...llm, content: 'The CI runs on a Raspberry Pi 5.', category: 'environment' });
    await service.update({ ...llm, id: first.id, confirmed: true });
    // Stored among others so that the lexical search has to find it, weeks later.
    await service.store({ ...llm, content: 'The staging server runs Debian 12' });
    await service.store({ ...llm, content: 'CI results go to the #builds channel' });
    now = new Date('2026-06-01T12:00:00.000Z');

    const again = await service.store({ ...llm, content: 'the ci runs on a raspberry PI 5', dedupe: true });

    expect(again).toMatchObject({ id: first.id, content: 'The CI runs on a Raspberry Pi 5.', existing: true, isConfirmed: true, referenceCount: 1 });
    expect(again.lastReferenced).toBe(now.toISOString());
    const listed = await service.list({ pool: 'team' });
    expect(listed.filter((entry) => /raspberry/i.test(entry.content))).toHaveLength(1);
    expect(await service.get({ pool: 'team', id: first.id })).toMatchObject({ isConfirmed: true, referenceCount: 1 });
  });

  it('stores a text that adds a detail, and a fact of another pool, as new entries', async () => {
    const first = await service.store({ ...llm, content: 'The CI runs on a Raspberry Pi' });
    const detailed = await service.store({ ...llm, content: 'The CI runs on a Raspberry Pi with 8 GB of RAM', dedupe: true });
    const elsewhere = await service.store({ ...llm, pool: 'other', content: 'The CI runs on a Raspberry Pi', dedupe: true });
    expect(detailed.existing).toBeUndefined();
    expect(detailed.id).not.toBe(first.id);
    expect(elsewhere.existing).toBeUndefined();
    expect(elsewhere.pool).toBe('other');
  });

  it('does not answer an archived entry: the fact is stored again', async () => {
    const first = await service.store({ ...llm, content: 'Deploys go out on Fridays' });
    await service.delete({ ...llm, id: first.id, reason: null });
    const again = await service.store({ ...llm, content: 'Deploys go out on Fridays', dedupe: true });
    expect(again.existing).toBeUndefined();
    expect(again.id).not.toBe(first.id);
  });

  it("without dedupe (a person's REST POST by default) stores what was sent, a second copy included", async () => {
    const user = { actor: 'user' as const, pool: 'team' };
    const first = await service.store({ ...user, content: 'Prefers tabs over spaces' });
    const second = await service.store({ ...user, content: 'prefers tabs over spaces!' });
    expect(second.existing).toBeUndefined();
    expect(second.id).not.toBe(first.id);
    expect(await service.list({ pool: 'team' })).toHaveLength(2);
  });
});
