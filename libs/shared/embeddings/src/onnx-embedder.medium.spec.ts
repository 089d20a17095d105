/**
 * @jest-environment ./tests/support/jest/native-typed-arrays-environment.mjs
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tempDataDir, writeSentenceEncoder } from '@engram/testing';
import { ModelFolderError } from './model-folder.js';
import { OnnxEmbedder } from './onnx-embedder.js';
import { SentenceEncoder } from './sentence-encoder.js';
import { vectorFromBase64 } from './vector-codec.js';

/** The thread runs compiled code: `npm run build` first (as `npm run test:medium` does). */
const script = new URL('../dist/onnx-thread.js', import.meta.url);
const many = (count: number): string[] =>
  Array.from({ length: count }, (_, i) => `entry ${i}: the deploy runs on a small box with docker compose and redis`);

describe('OnnxEmbedder (the model in a worker thread)', () => {
  const dir = tempDataDir('engram-model-');
  let embedder: OnnxEmbedder;

  beforeAll(async () => {
    writeSentenceEncoder(dir.path, { maxSeqLength: 32 });
    embedder = await OnnxEmbedder.open(dir.path, { script, threads: 1 });
  });

  afterAll(async () => {
    await embedder?.close();
    dir.remove();
  });

  it("gives the thread encoder's vectors, named by the folder's content", async () => {
    const encoder = await SentenceEncoder.open(dir.path, { threads: 1 });
    try {
      const texts = ['Has a puppy named Biscuit', 'Prefers PostgreSQL for new services'];
      const vectors = await embedder.embed(texts);
      expect(vectors.map((vector) => Array.from(vector))).toEqual((await encoder.encode(texts)).map((vector) => Array.from(vector)));
      expect(embedder).toMatchObject({ model: encoder.model, dimensions: 32, maxTokens: 32, pooling: 'mean' });
      expect((await embedder.embedBase64(texts)).map(vectorFromBase64)).toEqual(vectors);
    } finally {
      await encoder.close();
    }
  });

  it("leaves the caller's event loop free while the model runs", async () => {
    let done = false;
    const started = performance.now();
    const embedding = embedder.embed(many(3_000)).finally(() => (done = true));
    let ticks = 0;
    while (!done) {
      await sleep(5);
      ticks++;
    }
    await embedding;
    const elapsed = performance.now() - started;
    // A run on this thread would let no timer fire until it ended.
    expect(elapsed).toBeGreaterThan(100);
    expect(ticks).toBeGreaterThan(elapsed / 50);
  });

  it('stops waiting at the deadline, as a timeout, and answers the next call', async () => {
    await expect(embedder.embed(many(3_000), { timeoutMs: 5 })).rejects.toMatchObject({
      name: 'TimeoutError',
      message: 'embedding timed out after 5 ms',
    });
    expect(await embedder.embed(['still here'])).toHaveLength(1);
  });

  it('fails the calls waiting on a thread that dies, and starts another for the next call', async () => {
    // The thread is private: reached here only to kill it as a crash would.
    const worker = (embedder as unknown as { live: { worker: Worker } }).live.worker;
    const waiting = embedder.embed(many(3_000));
    await worker.terminate();
    await expect(waiting).rejects.toThrow(/the embedding thread stopped/);
    expect(await embedder.embed(['after the crash'])).toHaveLength(1);
  });

  it('refuses to go on with changed model files after a restart of its thread', async () => {
    const other = tempDataDir('engram-model-');
    writeSentenceEncoder(other.path, { maxSeqLength: 32 });
    const changing = await OnnxEmbedder.open(other.path, { script });
    try {
      writeSentenceEncoder(other.path, { maxSeqLength: 32, seed: 7 });
      await (changing as unknown as { live: { worker: Worker } }).live.worker.terminate();
      await expect(changing.embed(['x'])).rejects.toThrow(/the model files changed since the start/);
    } finally {
      await changing.close();
      other.remove();
    }
  });

  it('says what is wrong with a folder it cannot load, from the thread', async () => {
    const broken = tempDataDir('engram-model-');
    writeSentenceEncoder(broken.path);
    rmSync(join(broken.path, 'tokenizer.json'));
    try {
      const opening = OnnxEmbedder.open(broken.path, { script });
      await expect(opening).rejects.toThrow(ModelFolderError);
      await expect(opening).rejects.toThrow(`${broken.path}: no tokenizer.json in the folder`);
    } finally {
      broken.remove();
    }
  });

  it('refuses calls once closed', async () => {
    const closing = await OnnxEmbedder.open(dir.path, { script });
    await closing.close();
    await expect(closing.embed(['x'])).rejects.toThrow('the embedder is closed');
  });
});
