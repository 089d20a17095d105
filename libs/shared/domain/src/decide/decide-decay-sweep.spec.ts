import { describe, expect, it } from '@jest/globals';
import { decideDecaySweep } from './decide-decay-sweep.js';
import { context, expected, given, past, stored } from './decide.fixture.js';

const DAY = 86_400_000;
const CREATED = '2026-01-01T00:00:00.000Z';
const daysLater = (days: number) => new Date(Date.parse(CREATED) + days * DAY);
const sweeper = () => context({ actor: 'worker:decay', causationId: 'job-7' });

/** The pool's entries as the store would hand them to the sweep. */
function entriesOf(...events: Parameters<typeof given>) {
  const { entry } = given(...events);
  return events.filter((event) => event.type === 'memory.stored').map((event) => entry(event.data.id as string)!);
}

function categorized(id: string, category: 'gotcha' | 'decision' | 'project') {
  return past('memory.categorized', { id, category }, { at: CREATED });
}

describe('decideDecaySweep', () => {
  it('given a plain fact unused for 30 days and a gotcha as old, then only the fact is archived, with the confidence that decided it', () => {
    const entries = entriesOf(
      stored('fact', { at: CREATED }),
      stored('gotcha', { at: CREATED }),
      categorized('fact', 'project'),
      categorized('gotcha', 'gotcha'),
    );
    const asOf = daysLater(30);
    const decision = decideDecaySweep({ context: sweeper(), asOf }, entries);
    expect(decision.archived).toEqual(['fact']);
    expect(decision.examined).toBe(2);
    expect(decision.events).toEqual([
      expected('memory.archived', { id: 'fact', reason: `decayed: effective confidence 0.215 < 0.3 at ${asOf.toISOString()}` }, 1, {
        actor: 'worker:decay',
        causationId: 'job-7',
      }),
    ]);
  });

  it('counts from the last reference: an entry used recently stays', () => {
    const entries = entriesOf(stored('used', { at: CREATED }), past('memory.referenced', { ids: ['used'] }, { at: daysLater(20).toISOString() }));
    expect(decideDecaySweep({ context: sweeper(), asOf: daysLater(30) }, entries).archived).toEqual([]);
  });

  it('archives an entry stored below the threshold at once, and keeps one stored above it', () => {
    const entries = entriesOf(stored('doubtful', { at: CREATED, confidence: 0.25 }), stored('sure', { at: CREATED, confidence: 0.9 }));
    expect(decideDecaySweep({ context: sweeper(), asOf: new Date(CREATED) }, entries).archived).toEqual(['doubtful']);
  });

  it('given archived entries and entries of another pool, then it leaves them alone and does not count them', () => {
    const entries = entriesOf(
      stored('archived', { at: CREATED }),
      past('memory.archived', { id: 'archived', reason: 'archived' }),
      stored('elsewhere', { at: CREATED, pool: 'q' }),
    );
    expect(decideDecaySweep({ context: sweeper(), asOf: daysLater(100) }, entries)).toEqual({ events: [], examined: 0, archived: [] });
  });

  it('given the entries its own events leave, then a second sweep at the same time decides nothing', () => {
    const first = [stored('a', { at: CREATED }), stored('b', { at: CREATED })];
    const asOf = daysLater(40);
    const decision = decideDecaySweep({ context: sweeper(), asOf }, entriesOf(...first));
    expect(decision.archived).toEqual(['a', 'b']);
    const archivedNow = decision.events.map((event) => past('memory.archived', event.data as { id: string; reason: string }));
    const again = decideDecaySweep({ context: sweeper(), asOf }, entriesOf(...first, ...archivedNow));
    expect(again).toEqual({ events: [], examined: 0, archived: [] });
  });
});
