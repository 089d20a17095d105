/** Turns texts into vectors, one per text, in order. */
export interface Embedder {
  /** The model every vector comes from; vectors of different models are never compared. */
  readonly model: string;
  /** Rejects on any failure (unreachable, an error answer, past `timeoutMs`); never answers in part. */
  embed(texts: readonly string[], options?: { readonly timeoutMs?: number }): Promise<Float32Array[]>;
}
