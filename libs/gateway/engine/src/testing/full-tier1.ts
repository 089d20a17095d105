import { buildTier1, type MemoryEntry } from '@engram/domain';
import { memoryEntry } from '@engram/testing';

const FACTS = [
  'Prefers TypeScript over Python for tooling',
  'Deploys with docker compose on a Synology NAS',
  'Works on the billing team with Dana',
  'Uses pnpm and vitest in every repo',
  'Likes short answers without preamble',
  'Lives in Lyon; writes in English',
  'Never wants force-pushes suggested',
];
// Ids as the service makes them (10 random lowercase letters and digits): they cost more tokens than words.
const IDS = ['k3j9x0a2mq', 'p0z8c7v6b5', 'a1s2d3f4g5', 'q9w8e7r6t5', 'm4n3b2v1c0', 'z7y6x5w4v3', 'h2g1f0e9d8'];

/** A Tier 1 block filled to `maxChars` with short preference lines: the costliest realistic block for the token budget. */
export function fullTier1Block(maxChars: number): string {
  const at = '2026-03-10T08:00:00.000Z';
  const entries: MemoryEntry[] = FACTS.map((content, index) =>
    memoryEntry(IDS[index] ?? `id${index}`, { pool: 'default', type: 'USER', category: 'preference', content, createdAt: at, updatedAt: at }),
  );
  return buildTier1(entries, { now: new Date('2026-03-10T15:00:00.000Z'), maxChars }).block;
}
