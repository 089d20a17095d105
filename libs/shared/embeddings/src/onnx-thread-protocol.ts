import type { Pooling } from './model-folder.js';
import type { SentenceEncoderOptions } from './sentence-encoder.js';

/** What OnnxEmbedder and its thread say to each other (structured-clone values). */
export interface ThreadStart {
  readonly dir: string;
  readonly options: SentenceEncoderOptions;
}

export interface ThreadRequest {
  readonly id: number;
  readonly texts: readonly string[];
}

export interface ThreadError {
  readonly name: string;
  readonly message: string;
}

export type ThreadReply =
  | { readonly type: 'ready'; readonly model: string; readonly dimensions: number; readonly maxTokens: number; readonly pooling: Pooling }
  | { readonly type: 'failed'; readonly error: ThreadError }
  | { readonly type: 'vectors'; readonly id: number; readonly vectors: Float32Array[] }
  | { readonly type: 'error'; readonly id: number; readonly error: ThreadError };
