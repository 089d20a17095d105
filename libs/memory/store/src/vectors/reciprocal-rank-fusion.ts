/** The usual constant of reciprocal rank fusion (Cormack et al. 2009): damps the weight of the very top ranks. */
export const RRF_K = 60;

/**
 * Reciprocal rank fusion: each id scores the sum of 1 / (RRF_K + rank) over the rankings it appears
 * in (rank 1 = best), so an entry that both words and meaning rank well comes first, and one that
 * only one of them finds still takes part. Returns ids best first; ties keep the order of the
 * earlier ranking, then of the later.
 */
export function reciprocalRankFusion(rankings: readonly (readonly string[])[]): { readonly id: string; readonly score: number }[] {
  const scores = new Map<string, { score: number; firstSeen: number }>();
  let seen = 0;
  for (const ranking of rankings) {
    ranking.forEach((id, index) => {
      const slot = scores.get(id) ?? { score: 0, firstSeen: seen++ };
      slot.score += 1 / (RRF_K + index + 1);
      scores.set(id, slot);
    });
  }
  return [...scores].sort(([, a], [, b]) => b.score - a.score || a.firstSeen - b.firstSeen).map(([id, { score }]) => ({ id, score }));
}
