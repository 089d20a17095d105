/**
 * @jest-environment ./tests/support/jest/native-typed-arrays-environment.mjs
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { tempDataDir, writeSentenceEncoder } from '@engram/testing';
import * as ort from 'onnxruntime-node';
import { ModelFolderError, readModelFolder } from './model-folder.js';
import { SentenceEncoder } from './sentence-encoder.js';

const TEXTS = [
  'Has a puppy named Biscuit',
  'Drives a blue sedan to the office every day',
  'Prefers PostgreSQL for new services',
  'Deploys with docker compose on a NAS',
  'ok',
];
/** The tiny model's tokenizer spells words letter by letter: this is far over its 32 tokens. */
const LONG = 'the quick brown fox jumps over the lazy dog while the band plays on';
/** Float32 rounding of sums over a few dozen tokens in another order; any real difference is far larger. */
const CLOSE = 5;

const norm = (vector: Float32Array): number => Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
const cosine = (a: Float32Array, b: Float32Array): number => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
const expectSameVector = (actual: Float32Array, expected: Float32Array): void => {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, CLOSE));
};

describe('SentenceEncoder on a generated BERT-shaped model', () => {
  const dir = tempDataDir('engram-model-');
  let encoder: SentenceEncoder;

  beforeAll(async () => {
    writeSentenceEncoder(dir.path, { maxSeqLength: 32 });
    encoder = await SentenceEncoder.open(dir.path, { threads: 1 });
  });

  afterAll(async () => {
    await encoder?.close();
    dir.remove();
  });

  it('gives one unit vector of the hidden size per text, in order', async () => {
    const vectors = await encoder.encode(TEXTS);
    expect(vectors).toHaveLength(TEXTS.length);
    expect(encoder.dimensions).toBe(32);
    for (const vector of vectors) {
      expect(vector).toHaveLength(32);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
    // Different texts, different vectors (a pooling bug that averages everything away would fail here).
    expect(cosine(vectors[0]!, vectors[1]!)).toBeLessThan(0.99);
  });

  it('gives the same vector for the same text, call after call and from a second session on the same folder', async () => {
    const [first] = await encoder.encode([TEXTS[0]!]);
    const [again] = await encoder.encode([TEXTS[0]!]);
    expect(Array.from(again!)).toEqual(Array.from(first!));
    const other = await SentenceEncoder.open(dir.path, { threads: 2 });
    try {
      expectSameVector((await other.encode([TEXTS[0]!]))[0]!, first!);
      expect(other.model).toBe(encoder.model);
    } finally {
      await other.close();
    }
  });

  it('pools the mean of the token vectors over the attention mask: padding does not change a text', async () => {
    const short = encoder.tokenize('ok');
    const long = encoder.tokenize(LONG);
    expect(long.ids.length).toBeGreaterThan(short.ids.length + 10);
    const [alone] = await encoder.run([short]);
    // In one run with a longer text, 'ok' is padded to the longer one's length.
    const [padded, other] = await encoder.run([short, long]);
    expectSameVector(padded!, alone!);
    expectSameVector(other!, (await encoder.run([long]))[0]!);
  });

  it('pools as the model card says: the mean of last_hidden_state over the text, L2-normalised', async () => {
    // Computed here from the raw model output, independently of the encoder's pooling.
    const session = await ort.InferenceSession.create(join(dir.path, 'model.onnx'));
    try {
      const { ids } = encoder.tokenize(TEXTS[1]!);
      const dims = [1, ids.length];
      const output = await session.run({
        input_ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), dims),
        attention_mask: new ort.Tensor('int64', new BigInt64Array(ids.length).fill(1n), dims),
        token_type_ids: new ort.Tensor('int64', new BigInt64Array(ids.length), dims),
      });
      const hidden = output.last_hidden_state!.data as Float32Array;
      const mean = new Float32Array(32).map((_, i) => ids.reduce((sum, _id, token) => sum + hidden[token * 32 + i]!, 0) / ids.length);
      const expected = mean.map((value) => value / norm(mean));
      expectSameVector((await encoder.encode([TEXTS[1]!]))[0]!, expected);
    } finally {
      await session.release();
    }
  });

  it('gives a batch the same vectors as one text at a time, whatever the order and the batch size', async () => {
    const texts = [...TEXTS, LONG, ...TEXTS.map((text) => text.toUpperCase())];
    const oneByOne: Float32Array[] = [];
    for (const text of texts) oneByOne.push((await encoder.encode([text]))[0]!);
    const together = await encoder.encode(texts);
    together.forEach((vector, i) => expectSameVector(vector, oneByOne[i]!));
    // Uncased tokenizer: upper case is the same text.
    expectSameVector(together[texts.length - 1]!, together[TEXTS.length - 1]!);

    const small = await SentenceEncoder.open(dir.path, { maxBatch: 2 });
    try {
      (await small.encode(texts)).forEach((vector, i) => expectSameVector(vector, oneByOne[i]!));
    } finally {
      await small.close();
    }
  });

  it("cuts a text to the model's maximum length, keeping its start and the special tokens", async () => {
    const tokens = encoder.tokenize(LONG).ids;
    expect(tokens).toHaveLength(32);
    expect(tokens[0]).toBe(101); // [CLS]
    expect(tokens[31]).toBe(102); // [SEP]
    // What comes after the cut does not matter.
    expectSameVector((await encoder.encode([`${LONG} and then some more words at the end`]))[0]!, (await encoder.encode([LONG]))[0]!);
    expect(encoder.tokenize('ok').ids).toEqual([101, expect.any(Number), expect.any(Number), 102]);
  });
});

describe('a model folder', () => {
  const dirs: ReturnType<typeof tempDataDir>[] = [];
  const folder = (options: Parameters<typeof writeSentenceEncoder>[1] = {}): string => {
    const dir = tempDataDir('engram-model-');
    dirs.push(dir);
    writeSentenceEncoder(dir.path, options);
    return dir.path;
  };

  afterAll(() => dirs.forEach((dir) => dir.remove()));

  it('is named by its content: the same files give the same name, other weights, length or pooling another', async () => {
    const key = async (options: Parameters<typeof writeSentenceEncoder>[1]): Promise<string> => (await readModelFolder(folder(options))).key;
    const base = await key({ maxSeqLength: 32 });
    expect(base).toMatch(/^onnx-[0-9a-f]{16}$/);
    expect(await key({ maxSeqLength: 32 })).toBe(base);
    expect(await key({ maxSeqLength: 32, seed: 2 })).not.toBe(base);
    expect(await key({ maxSeqLength: 16 })).not.toBe(base);
    expect(await key({ maxSeqLength: 32, pooling: 'cls' })).not.toBe(base);
  });

  it('reads the maximum length and pooling from the sentence-transformers files, with BERT defaults without them', async () => {
    expect(await readModelFolder(folder())).toMatchObject({ maxTokens: 512, pooling: 'mean' });
    expect(await readModelFolder(folder({ maxSeqLength: 256, pooling: 'cls' }))).toMatchObject({ maxTokens: 256, pooling: 'cls' });
  });

  it('takes the model from onnx/model.onnx, where a Hugging Face repository keeps it', async () => {
    const encoder = await SentenceEncoder.open(folder({ layout: 'hub', maxSeqLength: 32 }));
    try {
      expect((await encoder.encode(['hello']))[0]).toHaveLength(32);
    } finally {
      await encoder.close();
    }
  });

  it('pools the [CLS] token when 1_Pooling/config.json says so (bge), padding or not', async () => {
    const encoder = await SentenceEncoder.open(folder({ maxSeqLength: 32, pooling: 'cls' }));
    const mean = await SentenceEncoder.open(folder({ maxSeqLength: 32 }));
    try {
      const [cls] = await encoder.encode(['ok']);
      expect(cosine(cls!, (await mean.encode(['ok']))[0]!)).toBeLessThan(0.999);
      const [padded] = await encoder.run([encoder.tokenize('ok'), encoder.tokenize(LONG)]);
      expectSameVector(padded!, cls!);
    } finally {
      await encoder.close();
      await mean.close();
    }
  });

  it('is refused with the file named when a file is missing or is not what it should be', async () => {
    const noTokenizer = folder();
    rmSync(join(noTokenizer, 'tokenizer.json'));
    await expect(SentenceEncoder.open(noTokenizer)).rejects.toThrow(new ModelFolderError(`${noTokenizer}: no tokenizer.json in the folder`));
    await expect(SentenceEncoder.open(join(noTokenizer, 'nowhere'))).rejects.toThrow(ModelFolderError);

    const noModel = folder();
    rmSync(join(noModel, 'model.onnx'));
    await expect(SentenceEncoder.open(noModel)).rejects.toThrow(/no model\.onnx/);

    const notOnnx = folder();
    writeFileSync(join(notOnnx, 'model.onnx'), 'not a model');
    await expect(SentenceEncoder.open(notOnnx)).rejects.toThrow(/model\.onnx: ONNX Runtime cannot load it/);

    const badPooling = folder({ pooling: 'mean' });
    writeFileSync(join(badPooling, '1_Pooling', 'config.json'), JSON.stringify({ pooling_mode_max_tokens: true }));
    await expect(SentenceEncoder.open(badPooling)).rejects.toThrow(/pooling pooling_mode_max_tokens is not supported/);
  });
});
