/** Words that carry no fact: "The user prefers X" and "User prefers X" say the same thing. */
const STOPWORDS = new Set([
  'a',
  'an',
  'the',
  'and',
  'or',
  'of',
  'to',
  'in',
  'on',
  'at',
  'for',
  'with',
  'is',
  'are',
  'was',
  'were',
  'be',
  'it',
  'its',
  'this',
  'that',
  'as',
  'by',
  'from',
  'so',
  'very',
  'really',
  'just',
]);

const SHINGLE = 3;

/** Lower case, accents and punctuation removed, stopwords dropped: the words that carry the fact. */
export function contentTokens(text: string): string[] {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((token) => token.length > 0 && !STOPWORDS.has(token));
}

/** A crude stem, so "prefers"/"prefer" and "crashed"/"crash" count as one word when checking coverage. */
function stem(token: string): string {
  return token.length > 4 ? token.replace(/(?:ing|ed|es|s)$/, '') : token;
}

/** A text prepared once for many comparisons. */
export interface TextFingerprint {
  readonly tokens: ReadonlySet<string>;
  readonly stems: ReadonlySet<string>;
  readonly shingles: ReadonlySet<string>;
}

export function fingerprint(text: string): TextFingerprint {
  const tokens = contentTokens(text);
  const joined = ` ${tokens.join(' ')} `;
  const shingles = new Set<string>();
  for (let i = 0; i + SHINGLE <= joined.length; i++) shingles.add(joined.slice(i, i + SHINGLE));
  return { tokens: new Set(tokens), stems: new Set(tokens.map(stem)), shingles };
}

function isSubset(small: ReadonlySet<string>, large: ReadonlySet<string>): boolean {
  for (const item of small) if (!large.has(item)) return false;
  return true;
}

/** True when every word of `a` (stemmed) is in `b`: b says at least what a says. */
export function covers(b: TextFingerprint, a: TextFingerprint): boolean {
  return isSubset(a.stems, b.stems);
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let shared = 0;
  for (const item of small) if (large.has(item)) shared++;
  return shared / (a.size + b.size - shared);
}

/**
 * Similarity in [0, 1] of two fingerprints: the mean of word-set and character-trigram Jaccard.
 * Words catch reordering; trigrams catch inflection and typos ("prefers"/"prefer").
 */
export function fingerprintSimilarity(a: TextFingerprint, b: TextFingerprint): number {
  return (jaccard(a.tokens, b.tokens) + jaccard(a.shingles, b.shingles)) / 2;
}

export function textSimilarity(a: string, b: string): number {
  return fingerprintSimilarity(fingerprint(a), fingerprint(b));
}

/** Two texts at or above this look alike; they are near-duplicates only if one also covers the other. */
export const NEAR_DUPLICATE_SIMILARITY = 0.75;

/**
 * Near-duplicates: alike, and one says everything the other says. Similarity alone would merge
 * "fails without fixture 4" with "fails without fixture 74": alike, yet two facts. Requiring
 * coverage means keeping the fuller wording of a group loses nothing.
 */
export function isNearDuplicate(a: TextFingerprint, b: TextFingerprint, threshold = NEAR_DUPLICATE_SIMILARITY): boolean {
  return fingerprintSimilarity(a, b) >= threshold && (covers(a, b) || covers(b, a));
}

export interface NearDuplicateOptions<T> {
  readonly text: (item: T) => string;
  /** Only items with the same key may be grouped (e.g. pool and type). */
  readonly key?: (item: T) => string;
  readonly threshold?: number;
}

/**
 * Groups of two or more near-duplicates, in input order. An item joins the first group whose
 * every member it is a near-duplicate of (complete linkage), so a chain A~B~C of drifting texts
 * does not collapse A and C together. Within a group the member with the most words covers all
 * the others (coverage is an inclusion chain).
 */
export function groupNearDuplicates<T>(items: readonly T[], options: NearDuplicateOptions<T>): T[][] {
  const threshold = options.threshold ?? NEAR_DUPLICATE_SIMILARITY;
  const key = options.key ?? (() => '');
  const groups: { key: string; members: { item: T; print: TextFingerprint }[] }[] = [];
  for (const item of items) {
    const itemKey = key(item);
    const print = fingerprint(options.text(item));
    const home = groups.find((group) => group.key === itemKey && group.members.every((member) => isNearDuplicate(member.print, print, threshold)));
    if (home) home.members.push({ item, print });
    else groups.push({ key: itemKey, members: [{ item, print }] });
  }
  return groups.filter((group) => group.members.length > 1).map((group) => group.members.map((member) => member.item));
}

/**
 * The candidate that already says what `text` says: the most similar one at or above the
 * threshold that covers every word of `text`. Null when the text adds something new.
 */
export function mostSimilar<T>(
  text: string,
  candidates: readonly T[],
  candidateText: (item: T) => string,
  threshold = NEAR_DUPLICATE_SIMILARITY,
): { readonly item: T; readonly similarity: number } | null {
  const print = fingerprint(text);
  let best: { item: T; similarity: number } | null = null;
  for (const item of candidates) {
    const other = fingerprint(candidateText(item));
    const similarity = fingerprintSimilarity(print, other);
    if (similarity >= threshold && covers(other, print) && (!best || similarity > best.similarity)) best = { item, similarity };
  }
  return best;
}
