import { describe, expect, it } from '@jest/globals';
import { memoryServicePerTest } from '../testing/memory-service-per-test.js';

const memory = memoryServicePerTest();
const llm = { actor: 'llm' as const, pool: 'team' };

describe('store with dedupe: no second copy of a fact', () => {
  it('answers the entry that already says it, records a reference to it, and keeps it confirmed', async () => {
    const first = await memory.service.store({ ...llm, content: 'The CI runs on a Raspberry Pi 5.', category: 'environment' });
    await memory.service.update({ ...llm, id: first.id, confirmed: true });
    // Stored among others so that the lexical search has to find it, weeks later.
    await memory.service.store({ ...llm, content: 'The staging server runs Debian 12' });
    await memory.service.store({ ...llm, content: 'CI results go to the #builds channel' });
    memory.now = new Date('2026-06-01T12:00:00.000Z');

    const again = await memory.service.store({ ...llm, content: 'the ci runs on a raspberry PI 5', dedupe: true });

    expect(again).toMatchObject({ id: first.id, content: 'The CI runs on a Raspberry Pi 5.', existing: true, isConfirmed: true, referenceCount: 1 });
    expect(again.lastReferenced).toBe(memory.now.toISOString());
    const listed = await memory.service.list({ pool: 'team' });
    expect(listed.filter((entry) => /raspberry/i.test(entry.content))).toHaveLength(1);
    expect(await memory.service.get({ pool: 'team', id: first.id })).toMatchObject({ isConfirmed: true, referenceCount: 1 });
  });

  it('stores a text that adds a detail, and a fact of another pool, as new entries', async () => {
    const first = await memory.service.store({ ...llm, content: 'The CI runs on a Raspberry Pi' });
    const detailed = await memory.service.store({ ...llm, content: 'The CI runs on a Raspberry Pi with 8 GB of RAM', dedupe: true });
    const elsewhere = await memory.service.store({ ...llm, pool: 'other', content: 'The CI runs on a Raspberry Pi', dedupe: true });
    expect(detailed.existing).toBeUndefined();
    expect(detailed.id).not.toBe(first.id);
    expect(elsewhere.existing).toBeUndefined();
    expect(elsewhere.pool).toBe('other');
  });

  it('does not answer an archived entry: the fact is stored again', async () => {
    const first = await memory.service.store({ ...llm, content: 'Deploys go out on Fridays' });
    await memory.service.delete({ ...llm, id: first.id, reason: null });
    const again = await memory.service.store({ ...llm, content: 'Deploys go out on Fridays', dedupe: true });
    expect(again.existing).toBeUndefined();
    expect(again.id).not.toBe(first.id);
  });

  it("without dedupe (a person's REST POST by default) stores what was sent, a second copy included", async () => {
    const user = { actor: 'user' as const, pool: 'team' };
    const first = await memory.service.store({ ...user, content: 'Prefers tabs over spaces' });
    const second = await memory.service.store({ ...user, content: 'prefers tabs over spaces!' });
    expect(second.existing).toBeUndefined();
    expect(second.id).not.toBe(first.id);
    expect(await memory.service.list({ pool: 'team' })).toHaveLength(2);
  });
});
