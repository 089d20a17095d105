import type { SearchHit } from '@engram/contracts';
import { describe, expect, it } from '@jest/globals';
import { memoryEntry } from '@engram/testing';
import { searchResultText } from './search-result-lines.js';

const now = new Date('2026-05-10T12:00:00.000Z');
const hit = (id: string, content: string, category: SearchHit['entry']['category'], createdAt: string, effectiveConfidence: number): SearchHit => ({
  entry: memoryEntry(id, { content, category, createdAt }),
  score: 1,
  effectiveConfidence,
});

describe('the memory_search answer', () => {
  it('is one short line per hit, best first, with category, age and effective confidence', () => {
    const hits = [
      hit('a1', 'Deploys go out on Fridays', 'project', '2026-05-07T09:00:00.000Z', 0.83),
      hit('b2', 'Staging runs Debian 12', null, '2026-05-10T08:00:00.000Z', 1),
      hit('c3', 'The CI runs on a Raspberry Pi', 'environment', '2026-02-01T00:00:00.000Z', 0.51),
    ];
    expect(searchResultText('deploys', hits, new Set(), 5, now)).toBe(
      'Found 3:\n[id:a1] Deploys go out on Fridays (project, 3d ago, conf 0.8)\n[id:b2] Staging runs Debian 12 (today, conf 1.0)\n[id:c3] The CI runs on a Raspberry Pi (environment, 3mo ago, conf 0.5)',
    );
  });

  it('names entries of the Tier 1 block the model was given after the hits instead of repeating them', () => {
    const hits = [
      hit('t1', 'Prefers tabs', 'preference', '2026-05-01T00:00:00.000Z', 1),
      hit('a1', 'Deploys go out on Fridays', 'project', '2026-05-07T09:00:00.000Z', 0.8),
    ];
    expect(searchResultText('tabs deploys', hits, new Set(['t1', 't2']), 1, now)).toBe(
      'Found 1:\n[id:a1] Deploys go out on Fridays (project, 3d ago, conf 0.8)\nAlso in your memory block:\n[id:t1] Prefers tabs',
    );
  });

  it('names the matching ids when every hit is already in the Tier 1 block, so the model can cite them, and says when nothing matches', () => {
    const tabs = hit('t1', 'Prefers tabs', 'preference', '2026-05-01T00:00:00.000Z', 1);
    expect(searchResultText('tabs', [tabs], new Set(['t1']), 5, now)).toBe(
      'Only memories already in your memory block match "tabs":\n[id:t1] Prefers tabs',
    );
    expect(searchResultText('tabs', [], new Set(['t1']), 5, now)).toBe('No memories match "tabs".');
  });
});
