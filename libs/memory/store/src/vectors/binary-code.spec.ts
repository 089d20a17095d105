import { describe, expect, it } from '@jest/globals';
import { binaryCode, codeFromBlob, codeToBlob, codeWords, hammingDistance } from './binary-code.js';

/** A deterministic unit vector. */
function randomUnit(dimensions: number, seed: number): Float32Array {
  let state = seed;
  const next = (): number => {
    state = (state * 1103515245 + 12345) >>> 0;
    return state / 2 ** 32 - 0.5;
  };
  const vector = Float32Array.from({ length: dimensions }, next);
  const norm = Math.hypot(...vector);
  return vector.map((value) => value / norm);
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

/** `a` turned towards `b` so that their cosine is about `target`. */
function mix(a: Float32Array, b: Float32Array, weight: number): Float32Array {
  const mixed = a.map((value, i) => (1 - weight) * value + weight * b[i]!);
  const norm = Math.hypot(...mixed);
  return mixed.map((value) => value / norm);
}

describe('binaryCode', () => {
  it('has at least 1,024 bits, a power of two per round: 2,048 for 1,536 dimensions, 1,024 for 384', () => {
    expect(codeWords(1_536) * 32).toBe(2_048);
    expect(codeWords(384) * 32).toBe(1_024);
    expect(binaryCode(randomUnit(1_536, 1))).toHaveLength(64);
  });

  it('is the same for the same vector, and survives the trip through a blob', () => {
    const vector = randomUnit(1_536, 7);
    const code = binaryCode(vector);
    expect(binaryCode(Float32Array.from(vector))).toEqual(code);
    expect(codeFromBlob(codeToBlob(code))).toEqual(code);
  });

  it('differs in a share of bits close to angle / pi, also when the coordinates spread unevenly', () => {
    const dimensions = 1_536;
    // Coordinates of very different spread (as real embeddings have): the estimate must hold in the vectors' own geometry.
    const spread = Float32Array.from({ length: dimensions }, (_, i) => (i % 7 === 0 ? 6 : 0.5));
    for (const [seed, weight] of [
      [1, 0.2],
      [2, 0.5],
      [3, 0.8],
    ] as const) {
      const a = randomUnit(dimensions, seed).map((value, i) => value * spread[i]!);
      const b = mix(
        a,
        randomUnit(dimensions, seed + 100).map((value, i) => value * spread[i]!),
        1 - weight,
      );
      const norm = Math.hypot(...a);
      const unitA = a.map((value) => value / norm);
      const angle = Math.acos(cosine(unitA, b));
      const share = hammingDistance(binaryCode(unitA), binaryCode(b), 0) / 2_048;
      expect(Math.abs(share - angle / Math.PI)).toBeLessThan(0.04);
    }
  });

  it('ranks a closer vector closer', () => {
    const query = randomUnit(1_536, 11);
    const other = randomUnit(1_536, 12);
    const near = binaryCode(mix(query, other, 0.3));
    const far = binaryCode(mix(query, other, 0.6));
    const code = binaryCode(query);
    expect(hammingDistance(code, near, 0)).toBeLessThan(hammingDistance(code, far, 0));
  });
});
