import type { ServerResponse } from 'node:http';
import { ScriptedHttpServer, type RecordedRequest } from './scripted-http.js';

/**
 * Words that mean the same thing share one concept, so a scripted vector of "automobile" points
 * where "sedan" points, as a real embedding model's would. Every other word is its own concept.
 */
const CONCEPTS: Readonly<Record<string, string>> = {
  car: 'car',
  cars: 'car',
  automobile: 'car',
  vehicle: 'car',
  sedan: 'car',
  drive: 'car',
  drives: 'car',
  dog: 'pet',
  dogs: 'pet',
  puppy: 'pet',
  cat: 'pet',
  pet: 'pet',
  pets: 'pet',
  kitten: 'pet',
  database: 'db',
  postgres: 'db',
  postgresql: 'db',
  sqlite: 'db',
  mysql: 'db',
  deploy: 'ship',
  deploys: 'ship',
  deployment: 'ship',
  release: 'ship',
  ships: 'ship',
};
const STOPWORDS = new Set([
  'a',
  'an',
  'the',
  'to',
  'of',
  'in',
  'on',
  'and',
  'or',
  'is',
  'are',
  'do',
  'does',
  'did',
  'what',
  'which',
  'i',
  'my',
  'we',
  'our',
  'with',
  'for',
  'own',
]);
const DEFAULT_DIMENSIONS = 64;

export type EmbeddingsMode = 'ok' | 'error' | 'hang';

/**
 * A scripted OpenAI-compatible `/v1/embeddings`: batched `input` (string or array), `data[]` with
 * `index` and `embedding` as floats or, when asked (`encoding_format: "base64"`, the OpenAI SDK's
 * default), little-endian float32 base64; `usage`; optional `dimensions`; OpenAI-shaped errors (a
 * missing or wrong key, a bad body, a scripted 500). `hang` never answers (a timeout).
 */
export class ScriptedEmbeddings {
  mode: EmbeddingsMode = 'ok';
  /** Every input text received, in order, across requests. */
  readonly inputs: string[] = [];

  private constructor(
    private readonly server: ScriptedHttpServer,
    readonly apiKey: string | undefined,
    private readonly vectorOf: (text: string, dimensions: number) => Float32Array,
  ) {}

  /** `vectorOf`: another text-to-vector mapping than the concepts above (the hybrid bench's clustered vectors). */
  static async start(
    options: { readonly apiKey?: string; readonly vectorOf?: (text: string, dimensions: number) => Float32Array } = {},
  ): Promise<ScriptedEmbeddings> {
    const holder: { instance?: ScriptedEmbeddings } = {};
    const server = await ScriptedHttpServer.start((request, response) => holder.instance?.answer(request, response));
    holder.instance = new ScriptedEmbeddings(server, options.apiKey, options.vectorOf ?? embed);
    return holder.instance;
  }

  /** EMBEDDINGS_BASE_URL for the services. */
  get baseUrl(): string {
    return `${this.server.url}/v1`;
  }

  get requests(): readonly RecordedRequest[] {
    return this.server.requests;
  }

  close(): Promise<void> {
    return this.server.close();
  }

  private answer(request: RecordedRequest, response: ServerResponse): void {
    if (request.method !== 'POST' || request.path !== '/v1/embeddings')
      return error(response, 404, 'Unknown request URL', 'invalid_request_error', 'unknown_url');
    if (this.apiKey !== undefined && request.headers.authorization !== `Bearer ${this.apiKey}`) {
      return error(response, 401, 'Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');
    }
    if (this.mode === 'hang') return;
    if (this.mode === 'error') return error(response, 500, 'The server had an error while processing your request.', 'server_error', null);
    const body = request.body as { model?: unknown; input?: unknown; encoding_format?: unknown; dimensions?: unknown };
    if (typeof body.model !== 'string' || body.model === '')
      return error(response, 400, 'you must provide a model parameter', 'invalid_request_error', null, 'model');
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || input.length > 2048 || !input.every((text) => typeof text === 'string' && text !== '')) {
      return error(response, 400, "'input' must be a non-empty string or array of non-empty strings", 'invalid_request_error', null, 'input');
    }
    const dimensions = body.dimensions === undefined ? DEFAULT_DIMENSIONS : Number(body.dimensions);
    if (!Number.isInteger(dimensions) || dimensions < 1)
      return error(response, 400, 'dimensions must be a positive integer', 'invalid_request_error', null, 'dimensions');
    const base64 = body.encoding_format === 'base64';
    this.inputs.push(...(input as string[]));
    let tokens = 0;
    const data = (input as string[]).map((text, index) => {
      tokens += text.split(/\s+/).length;
      const vector = this.vectorOf(text, dimensions);
      return { object: 'embedding', index, embedding: base64 ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector) };
    });
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  }
}

/** A unit vector: one direction per concept of the text. */
export function embed(text: string, dimensions = DEFAULT_DIMENSIONS): Float32Array {
  const vector = new Float32Array(dimensions);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOPWORDS.has(word)) continue;
    vector[bucket(CONCEPTS[word] ?? word, dimensions)]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((value) => value / norm);
}

function bucket(concept: string, dimensions: number): number {
  let hash = 2166136261;
  for (const char of concept) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619);
  return (hash >>> 0) % dimensions;
}

function error(response: ServerResponse, status: number, message: string, type: string, code: string | null, param: string | null = null): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { message, type, param, code } }));
}
