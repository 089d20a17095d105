import type * as Ort from 'onnxruntime-node';
import { type ModelFolder, ModelFolderError, type Pooling, readModelFolder } from './model-folder.js';

/**
 * The part of @huggingface/tokenizers used here, typed: the package's declarations import their
 * siblings without file extensions, which TypeScript's NodeNext resolution cannot follow (so the
 * class would be `any`).
 */
interface Tokenizer {
  encode(text: string, options?: { readonly add_special_tokens?: boolean }): { readonly ids: number[] };
  token_to_id(token: string): number | undefined;
}

/**
 * ONNX Runtime (a 45 MB native library) and the tokenizer are loaded when a model folder is opened,
 * not when this package is imported: services and commands that do not embed in-process never load them.
 */
async function runtime(): Promise<{ ort: typeof Ort; Tokenizer: new (tokenizer: object, config: object) => Tokenizer }> {
  const [ort, tokenizers] = await Promise.all([import('onnxruntime-node'), import('@huggingface/tokenizers')]);
  return {
    ort,
    Tokenizer: tokenizers.Tokenizer as unknown as new (tokenizer: object, config: object) => Tokenizer,
  };
}

export interface SentenceEncoderOptions {
  /** Threads one run may use (ONNX Runtime's intra-op pool). Default: ONNX Runtime's, one per core. */
  readonly threads?: number;
  /** Texts per run at most. */
  readonly maxBatch?: number;
}

/**
 * Texts per run. On CPU a bigger batch does not help: the matrix products are already wide at a few
 * dozen tokens a text, and a run of 8 keeps its activations in cache and its padding small (texts of
 * similar length share a run). Measured with a MiniLM-shaped model on 2 cores (`npm run bench --
 * embeddings`): runs of 4-8 memory-length texts embed the most per second, 32 about a third fewer,
 * 64 half.
 */
export const DEFAULT_MAX_BATCH = 8;
/**
 * Padded tokens per run at most (batch x longest text): bounds a run's memory, most of it the
 * attention scores (batch x heads x tokens x tokens floats: 8 x 12 x 256^2 x 4 B = 25 MB at
 * MiniLM's 256 tokens), however long the texts.
 */
const MAX_BATCH_TOKENS = 2_048;

/** A text as the model takes it: token ids, special tokens included, cut to the maximum length. */
export interface TokenizedText {
  readonly ids: readonly number[];
}

/**
 * A sentence-embedding model run in this thread with ONNX Runtime: tokenizes with the model's own
 * tokenizer.json, runs the encoder over batches of similar length, pools the token vectors
 * (mean over the attention mask, or [CLS], as the folder's pooling config says) and scales each
 * vector to unit length, as sentence-transformers does for these models. `token_type_ids`, when
 * the model takes them, are all 0 (one segment). Deterministic: the same text gives the same
 * vector alone, in any batch, padded to any length (within float rounding).
 */
export class SentenceEncoder {
  private constructor(
    private readonly ort: typeof Ort,
    private readonly session: Ort.InferenceSession,
    private readonly tokenizer: Tokenizer,
    readonly folder: ModelFolder,
    /** The special tokens the tokenizer puts before and after a text ([CLS] and [SEP] for BERT). */
    private readonly template: { readonly before: readonly number[]; readonly after: readonly number[] },
    private readonly padId: number,
    private readonly output: string,
    private readonly maxBatch: number,
  ) {}

  private width = 0;

  static async open(dir: string, options: SentenceEncoderOptions = {}): Promise<SentenceEncoder> {
    const folder = await readModelFolder(dir);
    const { ort, Tokenizer } = await runtime();
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(folder.tokenizer, folder.tokenizerConfig);
    } catch (error) {
      throw new ModelFolderError(`${dir}/tokenizer.json: ${error instanceof Error ? error.message : String(error)}`);
    }
    // ONNX Runtime's own log (warnings such as "Failed to persist telemetry device ID" on a read-only root
    // filesystem) goes to stderr as plain text; only errors are worth it there. Read once, at its first session.
    ort.env.logLevel = 'error';
    let session: Ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(folder.modelPath, {
        graphOptimizationLevel: 'all',
        ...(options.threads === undefined ? {} : { intraOpNumThreads: options.threads }),
        // Idle pool threads sleep instead of spinning: the box runs other services between runs.
        extra: { session: { intra_op: { allow_spinning: '0' } } },
        // Warnings about the graph (unused initializers, ...) are ONNX Runtime's business, not the operator's.
        logSeverityLevel: 3,
      });
    } catch (error) {
      throw new ModelFolderError(`${folder.modelPath}: ONNX Runtime cannot load it: ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      for (const name of ['input_ids', 'attention_mask']) {
        if (!session.inputNames.includes(name))
          throw new ModelFolderError(`${folder.modelPath}: the model has no input ${name} (inputs: ${session.inputNames.join(', ')})`);
      }
      const known = new Set(['input_ids', 'attention_mask', 'token_type_ids']);
      const unknown = session.inputNames.filter((name) => !known.has(name));
      if (unknown.length > 0) throw new ModelFolderError(`${folder.modelPath}: the model takes inputs this does not know: ${unknown.join(', ')}`);
      const output = ['last_hidden_state', 'token_embeddings'].find((name) => session.outputNames.includes(name));
      if (!output)
        throw new ModelFolderError(`${folder.modelPath}: the model has no last_hidden_state output (outputs: ${session.outputNames.join(', ')})`);
      const withSpecials = tokenizer.encode('a').ids;
      const bare = tokenizer.encode('a', { add_special_tokens: false }).ids;
      const start = withSpecials.findIndex((_, index) => bare.every((id, offset) => withSpecials[index + offset] === id));
      if (bare.length === 0 || start < 0) throw new ModelFolderError(`${dir}/tokenizer.json: cannot tell its special tokens from the text's`);
      const template = { before: withSpecials.slice(0, start), after: withSpecials.slice(start + bare.length) };
      if (template.before.length + template.after.length >= folder.maxTokens)
        throw new ModelFolderError(`${dir}: a maximum length of ${folder.maxTokens} tokens leaves no room for text`);
      const padding = folder.tokenizer.padding as { pad_id?: unknown } | null | undefined;
      const padId = typeof padding?.pad_id === 'number' ? padding.pad_id : (tokenizer.token_to_id('[PAD]') ?? 0);
      const encoder = new SentenceEncoder(ort, session, tokenizer, folder, template, padId, output, options.maxBatch ?? DEFAULT_MAX_BATCH);
      const [probe] = await encoder.encode(['a']);
      encoder.width = probe!.length;
      return encoder;
    } catch (error) {
      await session.release();
      throw error;
    }
  }

  /** Dimensions of a vector (the model's hidden size). */
  get dimensions(): number {
    return this.width;
  }

  /** The model's name for stored vectors (see ModelFolder.key). */
  get model(): string {
    return this.folder.key;
  }

  get pooling(): Pooling {
    return this.folder.pooling;
  }

  tokenize(text: string): TokenizedText {
    const { before, after } = this.template;
    const room = this.folder.maxTokens - before.length - after.length;
    const ids = this.tokenizer.encode(text, { add_special_tokens: false }).ids;
    return { ids: [...before, ...(ids.length > room ? ids.slice(0, room) : ids), ...after] };
  }

  /** One unit vector per text, in order. */
  async encode(texts: readonly string[]): Promise<Float32Array[]> {
    const tokenized = texts.map((text) => this.tokenize(text));
    const vectors: Float32Array[] = new Array<Float32Array>(texts.length);
    for (const batch of this.batches(tokenized)) {
      const pooled = await this.run(batch.map((index) => tokenized[index]!));
      batch.forEach((index, position) => (vectors[index] = pooled[position]!));
    }
    return vectors;
  }

  /** Runs one batch, padded to its longest text, as given (no re-ordering, no splitting). */
  async run(texts: readonly TokenizedText[]): Promise<Float32Array[]> {
    const batch = texts.length;
    const length = Math.max(...texts.map((text) => text.ids.length));
    const ids = new BigInt64Array(batch * length).fill(BigInt(this.padId));
    const mask = new BigInt64Array(batch * length);
    texts.forEach((text, row) => {
      text.ids.forEach((id, column) => {
        ids[row * length + column] = BigInt(id);
        mask[row * length + column] = 1n;
      });
    });
    const dims = [batch, length];
    const { Tensor } = this.ort;
    const feeds: Record<string, Ort.Tensor> = {
      input_ids: new Tensor('int64', ids, dims),
      attention_mask: new Tensor('int64', mask, dims),
    };
    if (this.session.inputNames.includes('token_type_ids')) feeds.token_type_ids = new Tensor('int64', new BigInt64Array(batch * length), dims);
    const results = await this.session.run(feeds, [this.output]);
    const hidden = results[this.output]!;
    const [rows, tokens, width] = hidden.dims as [number, number, number];
    if (hidden.type !== 'float32' || hidden.dims.length !== 3 || rows !== batch || tokens !== length) {
      throw new Error(`the model answered a ${hidden.type} ${hidden.dims.join('x')} tensor for ${batch}x${length} tokens`);
    }
    return texts.map((text, row) => pool(hidden.data as Float32Array, row, tokens, width, text.ids.length, this.folder.pooling));
  }

  async close(): Promise<void> {
    await this.session.release();
  }

  /**
   * Indices of the texts, sorted by length and cut into runs of at most maxBatch texts and
   * MAX_BATCH_TOKENS padded tokens: texts of similar length share a run, so little is padding.
   */
  private batches(texts: readonly TokenizedText[]): number[][] {
    const order = texts.map((_, index) => index).sort((a, b) => texts[a]!.ids.length - texts[b]!.ids.length);
    const batches: number[][] = [];
    let current: number[] = [];
    for (const index of order) {
      const length = texts[index]!.ids.length;
      // Sorted ascending: this text is the longest of the run so far.
      if (current.length > 0 && (current.length === this.maxBatch || (current.length + 1) * length > MAX_BATCH_TOKENS)) {
        batches.push(current);
        current = [];
      }
      current.push(index);
    }
    if (current.length > 0) batches.push(current);
    return batches;
  }
}

/** One text's vector from the token vectors of its row: pooled over its `count` real tokens, unit length. */
function pool(hidden: Float32Array, row: number, tokens: number, width: number, count: number, pooling: Pooling): Float32Array {
  // Sums in float64; the mean's division by `count` cancels out in the normalisation.
  const sum = new Float64Array(width);
  const rowStart = row * tokens * width;
  const used = pooling === 'cls' ? 1 : count;
  for (let token = 0; token < used; token++) {
    const offset = rowStart + token * width;
    for (let i = 0; i < width; i++) sum[i] = sum[i]! + hidden[offset + i]!;
  }
  let norm = 0;
  for (let i = 0; i < width; i++) norm += sum[i]! * sum[i]!;
  const scale = norm > 0 ? 1 / Math.sqrt(norm) : 0;
  return Float32Array.from(sum, (value) => value * scale);
}
