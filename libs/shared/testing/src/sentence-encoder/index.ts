import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type BertShape, MINILM_L6_SHAPE, writeBertModel } from './bert-model.js';
import { wordPieceTokenizerJson, wordPieceVocab } from './wordpiece-tokenizer.js';

export { bertModelBytes, type BertShape, MINILM_L6_SHAPE, writeBertModel } from './bert-model.js';
export { wordPieceTokenizerJson, wordPieceVocab } from './wordpiece-tokenizer.js';

/** A few function words get whole tokens; everything else is spelled letter by letter (`##` pieces). */
const TINY_WORDS = ['the', 'a', 'an', 'and', 'or', 'to', 'of', 'in', 'on', 'for', 'with', 'is', 'are', 'was', 'it', 'that', 'this'];

export interface SentenceEncoderOptions {
  /** Default: a tiny BERT (2 layers, hidden 32, 4 heads) over a vocabulary of characters and TINY_WORDS. */
  readonly shape?: 'tiny' | 'minilm-l6';
  /** Whole-word tokens besides characters; with `minilm-l6` the vocabulary is filled up to 30,522. */
  readonly words?: readonly string[];
  readonly seed?: number;
  /** Written as sentence_bert_config.json's max_seq_length when given, as sentence-transformers repos ship it. */
  readonly maxSeqLength?: number;
  /** Written as 1_Pooling/config.json when given. */
  readonly pooling?: 'mean' | 'cls';
  /** `hub`: the model at onnx/model.onnx, as in a Hugging Face repository; `flat` (default): model.onnx. */
  readonly layout?: 'flat' | 'hub';
}

/**
 * Writes a sentence-embedding model folder as a person would fetch one for EMBEDDINGS_MODEL_DIR:
 * an ONNX BERT encoder with random weights and its WordPiece tokenizer.json (and, when asked,
 * the sentence-transformers config files that say the maximum length and the pooling). Returns the
 * encoder's shape.
 */
export function writeSentenceEncoder(dir: string, options: SentenceEncoderOptions = {}): BertShape {
  const minilm = options.shape === 'minilm-l6';
  const vocab = wordPieceVocab(options.words ?? (minilm ? [] : TINY_WORDS), minilm ? MINILM_L6_SHAPE.vocab : undefined);
  const shape: BertShape = minilm
    ? MINILM_L6_SHAPE
    : { layers: 2, hidden: 32, heads: 4, intermediate: 64, vocab: vocab.size, maxPositions: 64, typeVocab: 2 };
  const modelDir = options.layout === 'hub' ? join(dir, 'onnx') : dir;
  mkdirSync(modelDir, { recursive: true });
  writeBertModel(join(modelDir, 'model.onnx'), shape, options.seed ?? 1);
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(wordPieceTokenizerJson(vocab)));
  if (options.maxSeqLength !== undefined) {
    writeFileSync(join(dir, 'sentence_bert_config.json'), JSON.stringify({ max_seq_length: options.maxSeqLength, do_lower_case: false }));
  }
  if (options.pooling !== undefined) {
    mkdirSync(join(dir, '1_Pooling'), { recursive: true });
    writeFileSync(
      join(dir, '1_Pooling', 'config.json'),
      JSON.stringify({
        word_embedding_dimension: shape.hidden,
        pooling_mode_cls_token: options.pooling === 'cls',
        pooling_mode_mean_tokens: options.pooling === 'mean',
        pooling_mode_max_tokens: false,
        pooling_mode_mean_sqrt_len_tokens: false,
      }),
    );
  }
  return shape;
}
