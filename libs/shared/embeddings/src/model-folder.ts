import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** How token vectors become one text vector: their mean over the attention mask, or the first ([CLS]) token's. */
export type Pooling = 'mean' | 'cls';

/** A sentence-embedding model folder (EMBEDDINGS_MODEL_DIR), read and checked. */
export interface ModelFolder {
  readonly dir: string;
  readonly modelPath: string;
  /** tokenizer.json, parsed. */
  readonly tokenizer: Record<string, unknown>;
  /** tokenizer_config.json, parsed, or {} when the folder has none. */
  readonly tokenizerConfig: Record<string, unknown>;
  /** Tokens per text, special tokens included; longer texts are cut (their start is kept). */
  readonly maxTokens: number;
  readonly pooling: Pooling;
  /**
   * The name vectors are stored under: `onnx-` and 16 hex digits of a hash of the model, the
   * tokenizer, the pooling and the maximum length. Other files, or the same files read otherwise,
   * make other vectors, so they get another name and the pool is embedded again.
   */
  readonly key: string;
}

/** BERT's position table: the longest input of the models this is for, when their files say nothing. */
const DEFAULT_MAX_TOKENS = 512;

export class ModelFolderError extends Error {
  override name = 'ModelFolderError';
}

function readJson(path: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ModelFolderError(`${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ModelFolderError(`${path}: not a JSON object`);
  return value as Record<string, unknown>;
}

const positiveInteger = (value: unknown): number | undefined =>
  Number.isSafeInteger(value) && (value as number) > 0 ? (value as number) : undefined;

/**
 * The maximum length as sentence-transformers applies it: sentence_bert_config.json's
 * max_seq_length (what each model card states: 256 for all-MiniLM-L6-v2, 512 for bge-small-en),
 * else tokenizer.json's own truncation, else tokenizer_config.json's model_max_length (libraries
 * write a huge number there when unset), else 512; never more than 512 unless a file says so.
 */
function maxTokensOf(dir: string, tokenizer: Record<string, unknown>, tokenizerConfig: Record<string, unknown>): number {
  const sentenceConfig = join(dir, 'sentence_bert_config.json');
  const fromSentenceConfig = existsSync(sentenceConfig) ? positiveInteger(readJson(sentenceConfig).max_seq_length) : undefined;
  const truncation = tokenizer.truncation as { max_length?: unknown } | null | undefined;
  const fromModelMax = positiveInteger(tokenizerConfig.model_max_length);
  return (
    fromSentenceConfig ??
    positiveInteger(truncation?.max_length) ??
    (fromModelMax !== undefined && fromModelMax <= 100_000 ? fromModelMax : undefined) ??
    DEFAULT_MAX_TOKENS
  );
}

/** 1_Pooling/config.json's mode when the folder has it (bge: cls; MiniLM: mean), else mean. */
function poolingOf(dir: string): Pooling {
  const path = join(dir, '1_Pooling', 'config.json');
  if (!existsSync(path)) return 'mean';
  const config = readJson(path);
  if (config.pooling_mode_cls_token === true) return 'cls';
  if (config.pooling_mode_mean_tokens === true) return 'mean';
  const modes = Object.keys(config).filter((key) => key.startsWith('pooling_mode_') && config[key] === true);
  throw new ModelFolderError(`${path}: pooling ${modes.join(', ') || '(none)'} is not supported (mean or cls tokens only)`);
}

async function sha256(path: string, hash = createHash('sha256')): Promise<Buffer> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest();
}

/**
 * Reads a model folder: `model.onnx` (or `onnx/model.onnx`, as the files sit in a Hugging Face
 * repository) and `tokenizer.json`, both required; `tokenizer_config.json`,
 * `sentence_bert_config.json` and `1_Pooling/config.json` when present. Throws ModelFolderError,
 * naming the file, when something is missing or unreadable.
 */
export async function readModelFolder(dir: string): Promise<ModelFolder> {
  if (!existsSync(dir)) throw new ModelFolderError(`${dir}: no such folder`);
  const modelPath = [join(dir, 'model.onnx'), join(dir, 'onnx', 'model.onnx')].find((path) => existsSync(path));
  if (!modelPath) throw new ModelFolderError(`${dir}: no model.onnx (nor onnx/model.onnx) in the folder`);
  const tokenizerPath = join(dir, 'tokenizer.json');
  if (!existsSync(tokenizerPath)) throw new ModelFolderError(`${dir}: no tokenizer.json in the folder`);
  const tokenizer = readJson(tokenizerPath);
  const tokenizerConfigPath = join(dir, 'tokenizer_config.json');
  const tokenizerConfig = existsSync(tokenizerConfigPath) ? readJson(tokenizerConfigPath) : {};
  const maxTokens = maxTokensOf(dir, tokenizer, tokenizerConfig);
  const pooling = poolingOf(dir);

  const hash = createHash('sha256');
  hash.update(await sha256(modelPath));
  hash.update(await sha256(tokenizerPath));
  hash.update(JSON.stringify({ pooling, maxTokens }));
  return { dir, modelPath, tokenizer, tokenizerConfig, maxTokens, pooling, key: `onnx-${hash.digest('hex').slice(0, 16)}` };
}
