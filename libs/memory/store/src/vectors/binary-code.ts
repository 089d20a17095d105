/**
 * A vector's binary code: the signs of the vector after a fixed pseudo-random rotation (random
 * hyperplanes, SimHash). Two codes differ in a share of their bits that estimates the angle between
 * the two vectors (share = angle / pi), whatever the shape of the space the vectors live in.
 *
 * The rotation matters. Signs taken in the model's own coordinates (sqlite-vec's
 * `vec_quantize_binary`) weigh every coordinate alike, while cosine is dominated by the coordinates
 * that vary most: on 1,536-dimension vectors with an uneven spread over coordinates, as real
 * embeddings have, the 10 nearest by those bits re-ranked from the best 400 held only 95% of the
 * exact 10 at 100k entries; after the rotation, 100% from the best 200 (bench/hybrid.bench.ts).
 * The rotation is two rounds of random signs and a Walsh-Hadamard transform over the vector padded to
 * a power of two (O(d log d), ~50 µs at 1,536 dimensions), repeated with other signs until the code
 * has at least MIN_BITS bits.
 */

/** Names the scheme below; codes stored under another name are computed again. */
export const BINARY_CODE_SCHEME = 'srht-sign-v1';

/** Fewer bits estimate the angle too coarsely to find the nearest among many close ones. */
const MIN_BITS = 1_024;

interface Rotation {
  readonly padded: number;
  readonly rounds: readonly { readonly first: Float64Array; readonly second: Float64Array }[];
}

const rotations = new Map<number, Rotation>();

/** How many 32-bit words the code of a vector of `dimensions` has. */
export function codeWords(dimensions: number): number {
  const rotation = rotationFor(dimensions);
  return (rotation.padded * rotation.rounds.length) / 32;
}

/** The binary code of a vector, as 32-bit words (bit i of the code is bit i % 32 of word i / 32). */
export function binaryCode(vector: Float32Array): Int32Array {
  const rotation = rotationFor(vector.length);
  const { padded } = rotation;
  const code = new Int32Array((padded * rotation.rounds.length) / 32);
  const work = new Float64Array(padded);
  rotation.rounds.forEach(({ first, second }, round) => {
    work.fill(0);
    for (let i = 0; i < vector.length; i++) work[i] = vector[i]! * first[i]!;
    walshHadamard(work);
    for (let i = 0; i < padded; i++) work[i]! *= second[i]!;
    walshHadamard(work);
    const offset = (round * padded) / 32;
    for (let word = 0; word < padded / 32; word++) {
      let bits = 0;
      for (let bit = 0; bit < 32; bit++) if (work[word * 32 + bit]! > 0) bits |= 1 << bit;
      code[offset + word] = bits;
    }
  });
  return code;
}

/**
 * How many bits differ between `words` words of code `a` and those at word `offset` of `codes`
 * (from word 0 of `a`; all of `a` by default). Bits are counted in parallel within each word (SWAR),
 * four words at a time summed per byte before one multiply adds the bytes: about twice as fast as
 * looking up 16-bit halves in a table, which the scan of a pool's codes spends most of its time on.
 */
export function hammingDistance(a: Int32Array, codes: Int32Array, offset: number, words = a.length): number {
  let distance = 0;
  let word = 0;
  for (; word + 4 <= words; word += 4) {
    let x0 = a[word]! ^ codes[offset + word]!;
    let x1 = a[word + 1]! ^ codes[offset + word + 1]!;
    let x2 = a[word + 2]! ^ codes[offset + word + 2]!;
    let x3 = a[word + 3]! ^ codes[offset + word + 3]!;
    x0 -= (x0 >>> 1) & 0x55555555;
    x1 -= (x1 >>> 1) & 0x55555555;
    x2 -= (x2 >>> 1) & 0x55555555;
    x3 -= (x3 >>> 1) & 0x55555555;
    x0 = (x0 & 0x33333333) + ((x0 >>> 2) & 0x33333333);
    x1 = (x1 & 0x33333333) + ((x1 >>> 2) & 0x33333333);
    x2 = (x2 & 0x33333333) + ((x2 >>> 2) & 0x33333333);
    x3 = (x3 & 0x33333333) + ((x3 >>> 2) & 0x33333333);
    // Each byte now holds at most 4 x 8 = 32: the four words' byte counts add without carrying over.
    const bytes = ((x0 + (x0 >>> 4)) & 0x0f0f0f0f) + ((x1 + (x1 >>> 4)) & 0x0f0f0f0f) + ((x2 + (x2 >>> 4)) & 0x0f0f0f0f) + ((x3 + (x3 >>> 4)) & 0x0f0f0f0f);
    distance += Math.imul(bytes, 0x01010101) >>> 24;
  }
  for (; word < words; word++) {
    let x = a[word]! ^ codes[offset + word]!;
    x -= (x >>> 1) & 0x55555555;
    x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
    distance += Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
  }
  return distance;
}

export function codeToBlob(code: Int32Array): Buffer {
  return Buffer.from(code.buffer, code.byteOffset, code.byteLength);
}

export function codeFromBlob(blob: Buffer): Int32Array {
  // A copy: the blob's memory is not necessarily aligned to 4 bytes.
  const code = new Int32Array(blob.length / 4);
  for (let word = 0; word < code.length; word++) code[word] = blob.readInt32LE(word * 4);
  return code;
}

function rotationFor(dimensions: number): Rotation {
  if (!Number.isInteger(dimensions) || dimensions < 1) throw new Error(`a vector needs at least one dimension, got ${dimensions}`);
  let rotation = rotations.get(dimensions);
  if (!rotation) {
    const padded = Math.max(32, 2 ** Math.ceil(Math.log2(dimensions)));
    const random = xorshift(0x9e3779b9);
    const signs = (): Float64Array => Float64Array.from({ length: padded }, () => (random() & 1 ? 1 : -1));
    const rounds = Array.from({ length: Math.max(1, Math.ceil(MIN_BITS / padded)) }, () => ({ first: signs(), second: signs() }));
    rotation = { padded, rounds };
    rotations.set(dimensions, rotation);
  }
  return rotation;
}

/** In place, unnormalised (a scale does not change signs). `values.length` is a power of two. */
function walshHadamard(values: Float64Array): void {
  for (let half = 1; half < values.length; half <<= 1) {
    for (let start = 0; start < values.length; start += half << 1) {
      for (let i = start; i < start + half; i++) {
        const a = values[i]!;
        const b = values[i + half]!;
        values[i] = a + b;
        values[i + half] = a - b;
      }
    }
  }
}

/** A fixed sequence (the codes must be the same in every process and release of the scheme). */
function xorshift(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
}
