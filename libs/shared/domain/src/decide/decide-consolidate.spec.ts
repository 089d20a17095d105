import { describe, expect, it } from '@jest/globals';
import { decideConsolidate, type Merge } from './decide-consolidate.js';
import { WriteRejection } from './write-command.js';
import { context, expected, given, past, stored } from './decide.fixture.js';

const merge = (supersedes: string[], id = 'merged1'): Merge => ({ content: 'merged fact', type: 'MEMORY', category: 'project', supersedes, id });

describe('decideConsolidate', () => {
  it('given active entries, when merged, then memory.consolidated superseding them, as confident as the most confident is now', () => {
    // Referenced at the command's time: no decay yet, so their stored confidences hold.
    const { lookup } = given(
      stored('a', { confidence: 0.5, at: '2026-03-01T12:00:00.000Z' }),
      stored('b', { confidence: 0.8, at: '2026-03-01T12:00:00.000Z' }),
    );
    expect(decideConsolidate({ context: context({ actor: 'worker:consolidate' }), model: 'm1', merges: [merge(['a', 'b'])] }, lookup)).toEqual({
      events: [
        expected(
          'memory.consolidated',
          { id: 'merged1', type: 'MEMORY', category: 'project', content: 'merged fact', confidence: 0.8, supersedes: ['a', 'b'], model: 'm1' },
          1,
          { actor: 'worker:consolidate' },
        ),
      ],
      created: ['merged1'],
      archived: ['a', 'b'],
    });
  });

  it('given entries that decayed, when merged, then the merged entry starts at their best effective confidence, to 4 places', () => {
    // 10 and 20 days unreferenced at 0.95 a day: 0.9 * 0.95^10 = 0.53885… and 1 * 0.95^20 = 0.35848…
    const { lookup } = given(
      stored('a', { confidence: 0.9, at: '2026-02-19T12:00:00.000Z' }),
      stored('b', { confidence: 1, at: '2026-02-09T12:00:00.000Z' }),
    );
    const [event] = decideConsolidate({ context: context(), model: 'm1', merges: [merge(['a', 'b'])] }, lookup).events;
    expect(event?.data).toMatchObject({ confidence: 0.5389 });
  });

  it('given two merges, then one event each, in order, and every superseded id once', () => {
    const { lookup } = given(stored('a'), stored('b'), stored('c'));
    const decision = decideConsolidate({ context: context(), model: 'm1', merges: [merge(['a', 'b'], 'm-1'), merge(['c'], 'm-2')] }, lookup);
    expect(decision.events.map((event) => [event.id, (event.data as { id: string }).id])).toEqual([
      ['n1', 'm-1'],
      ['n2', 'm-2'],
    ]);
    expect(decision.archived).toEqual(['a', 'b', 'c']);
  });

  it('given an archived entry, when a merge supersedes it, then rejected as an invalid request', () => {
    const { lookup } = given(stored('a'), stored('b'), past('memory.archived', { id: 'b', reason: 'archived' }));
    expect(() => decideConsolidate({ context: context(), model: 'm1', merges: [merge(['a', 'b'])] }, lookup)).toThrow(
      new WriteRejection('invalid_request', 'memory b is archived and cannot be consolidated'),
    );
  });

  it('given an entry, when two merges supersede it, then rejected as an invalid request', () => {
    const { lookup } = given(stored('a'), stored('b'));
    expect(() => decideConsolidate({ context: context(), model: 'm1', merges: [merge(['a'], 'm-1'), merge(['b', 'a'], 'm-2')] }, lookup)).toThrow(
      new WriteRejection('invalid_request', 'memory a appears in more than one merge'),
    );
  });

  it('given no such entry, when a merge supersedes it, then not found', () => {
    const { lookup } = given(stored('a'));
    expect(() => decideConsolidate({ context: context(), model: 'm1', merges: [merge(['a', 'x'])] }, lookup)).toThrow(
      new WriteRejection('not_found', 'memory x not found in pool p'),
    );
  });
});
