import type { EndpointEmbeddingsConfig } from '@engram/config';
import OpenAI from 'openai';
import type { Embedder } from './embedder.js';
import { vectorToBase64 } from './vector-codec.js';

/** Default deadline of a batch of entries (queries pass their own, much shorter one). */
const BATCH_TIMEOUT_MS = 60_000;

/**
 * An Embedder over the official OpenAI SDK, which every OpenAI-compatible server understands
 * (it asks for base64 vectors and decodes them; servers that ignore `encoding_format` answer
 * floats, which it takes as they are). No retries here: the worker's job retries with backoff,
 * and a search falls back to words at once.
 */
export class OpenAiEmbeddingsClient implements Embedder {
  readonly model: string;
  private readonly client: OpenAI;

  constructor(config: Pick<EndpointEmbeddingsConfig, 'baseUrl' | 'apiKey' | 'model'>) {
    this.model = config.model;
    // Local servers (Ollama, llama.cpp) need no key; the SDK insists on one and sends it as a bearer.
    this.client = new OpenAI({ baseURL: config.baseUrl, apiKey: config.apiKey ?? 'no-key', maxRetries: 0, timeout: BATCH_TIMEOUT_MS });
  }

  async embed(texts: readonly string[], options: { readonly timeoutMs?: number } = {}): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const response = await this.client.embeddings.create(
      { model: this.model, input: [...texts] },
      options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs },
    );
    const vectors: Float32Array[] = [];
    for (const item of response.data) vectors[item.index] = Float32Array.from(item.embedding);
    if (vectors.length !== texts.length || vectors.some((vector) => vector === undefined || vector.length === 0)) {
      throw new Error(`the embeddings endpoint answered ${response.data.length} vectors for ${texts.length} inputs`);
    }
    return vectors;
  }

  /** The same vectors as base64 float32s, as they travel over the memory RPC. */
  async embedBase64(texts: readonly string[]): Promise<string[]> {
    return (await this.embed(texts)).map(vectorToBase64);
  }

  /** Nothing to release (no connection is kept open between calls that outlives the process). */
  async close(): Promise<void> {}
}
