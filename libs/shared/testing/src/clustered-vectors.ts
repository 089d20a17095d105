/**
 * Vectors shaped like sentence embeddings, for tests and benchmarks of vector search (uniform noise
 * would make every neighbour equally far and any quantisation look perfect). Each vector is a unit
 * mix of four parts, as squared shares of its length:
 * - a direction every text shares (0.15): real models place unrelated texts at cosine ~0.1-0.2, not 0;
 * - its topic's direction (0.20 x u) and its subtopic's (0.20 x v), u and v drawn in [0.5, 1.5] per
 *   text, so texts of one subtopic sit at cosine ~0.5-0.6, of one topic at ~0.35, others at ~0.15,
 *   with a spread rather than fixed levels;
 * - noise of its own (the rest, ~0.45).
 * Every part is Gaussian with a spread that differs per coordinate (the i-th largest has variance
 * proportional to 1 / sqrt(i), in a fixed shuffled order): real embeddings' variance is uneven across
 * coordinates too, and a quantisation that ignores it ranks worse.
 * A text's topic and subtopic, and every random draw, follow from its key: the same key, the same vector.
 */
export interface ClusteredVectorsOptions {
  readonly dimensions: number;
  readonly topics: number;
  readonly subtopicsPerTopic: number;
  readonly seed?: number;
}

const COMMON = 0.15;
const TOPIC = 0.2;
const SUBTOPIC = 0.2;

export class ClusteredVectors {
  /** Per coordinate: its spread, scaled so that the mean square is 1 (the shares above are shares of the squared length). */
  private readonly spread: Float32Array;
  private readonly parts = new Map<string, Float32Array>();

  constructor(readonly options: ClusteredVectorsOptions) {
    const { dimensions } = options;
    const random = seeded(hashKey(`spread/${options.seed ?? 0}`));
    const order = Array.from({ length: dimensions }, (_, i) => ({ i, at: random() })).sort((a, b) => a.at - b.at);
    this.spread = new Float32Array(dimensions);
    order.forEach(({ i }, rank) => (this.spread[i] = (rank + 1) ** -0.25));
    let sum = 0;
    for (const spread of this.spread) sum += spread * spread;
    const scale = 1 / Math.sqrt(sum / dimensions);
    for (let i = 0; i < dimensions; i++) this.spread[i]! *= scale;
  }

  /** The vector of a stored text: its topic and subtopic follow from the key. */
  vector(key: string): Float32Array {
    const random = seeded(hashKey(`${this.options.seed ?? 0}/${key}`));
    const topic = Math.floor(random() * this.options.topics);
    const subtopic = Math.floor(random() * this.options.subtopicsPerTopic);
    return this.mix(random, topic, subtopic);
  }

  /** A question about the texts of one subtopic (drawn from the key), phrased in its own words (its own noise). */
  query(key: string): Float32Array {
    return this.vector(`query/${key}`);
  }

  /** A question about nothing stored: a topic of its own, sharing only the common direction. */
  unrelated(key: string): Float32Array {
    const random = seeded(hashKey(`${this.options.seed ?? 0}/unrelated/${key}`));
    return this.mix(random, this.options.topics + 1 + Math.floor(random() * 1_000), 0);
  }

  private mix(random: () => number, topic: number, subtopic: number): Float32Array {
    const topicWeight = Math.sqrt(TOPIC * (0.5 + random()));
    const subtopicWeight = Math.sqrt(SUBTOPIC * (0.5 + random()));
    const noiseWeight = Math.sqrt(Math.max(0.05, 1 - COMMON - topicWeight ** 2 - subtopicWeight ** 2));
    const common = this.part('common');
    const topicPart = this.part(`topic/${topic}`);
    const subtopicPart = this.part(`subtopic/${topic}/${subtopic}`);
    const vector = new Float32Array(this.options.dimensions);
    let norm = 0;
    for (let i = 0; i < vector.length; i++) {
      const value =
        Math.sqrt(COMMON) * common[i]! +
        topicWeight * topicPart[i]! +
        subtopicWeight * subtopicPart[i]! +
        noiseWeight * gaussian(random) * this.spread[i]!;
      vector[i] = value;
      norm += value * value;
    }
    norm = Math.sqrt(norm);
    for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
    return vector;
  }

  /** Spread-weighted Gaussian of unit expected length per coordinate, cached by name. */
  private part(name: string): Float32Array {
    let part = this.parts.get(name);
    if (!part) {
      const random = seeded(hashKey(`${this.options.seed ?? 0}/part/${name}`));
      part = Float32Array.from(this.spread, (spread) => gaussian(random) * spread);
      this.parts.set(name, part);
    }
    return part;
  }
}

/** Cosine similarity of two vectors of the same length. */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(normA * normB);
}

function hashKey(key: string): number {
  let hash = 2166136261;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 16777619);
  return hash >>> 0;
}

function seeded(seed: number): () => number {
  let state = seed || 1;
  return () => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 4_294_967_296;
  };
}

function gaussian(random: () => number): number {
  let u = 0;
  while (u === 0) u = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
