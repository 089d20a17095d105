const SPECIALS = { '[PAD]': 0, '[UNK]': 100, '[CLS]': 101, '[SEP]': 102, '[MASK]': 103 } as const;
const CHARACTERS = [...'abcdefghijklmnopqrstuvwxyz0123456789', ...'!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~'];

/**
 * A WordPiece vocabulary laid out like bert-base-uncased's: [PAD] at 0, [UNK] [CLS] [SEP] [MASK]
 * at 100-103, `[unusedN]` around them, then single characters and their `##` continuations (so
 * every lowercase ASCII text tokenizes, if only letter by letter), then `words` whole, then
 * `[unusedN]` up to `size` when given (a real model's vocabulary size, for a model of its shape).
 */
export function wordPieceVocab(words: readonly string[], size?: number): Map<string, number> {
  const vocab = new Map<string, number>();
  let unused = 0;
  const add = (token: string): void => {
    if (!vocab.has(token)) vocab.set(token, vocab.size);
  };
  for (let id = 0; id < 104; id++) {
    const special = Object.entries(SPECIALS).find(([, specialId]) => specialId === id)?.[0];
    add(special ?? `[unused${unused++}]`);
  }
  for (const char of CHARACTERS) add(char);
  for (const char of CHARACTERS) add(`##${char}`);
  for (const word of words) add(word.toLowerCase());
  if (size !== undefined) {
    if (vocab.size > size) throw new Error(`${vocab.size} tokens do not fit a vocabulary of ${size}`);
    while (vocab.size < size) add(`[unused${unused++}]`);
  }
  return vocab;
}

/**
 * A `tokenizer.json` (Hugging Face tokenizers' format) of an uncased BERT WordPiece tokenizer, as
 * all-MiniLM-L6-v2 and bge-small-en ship: BERT normalizer (lowercase, accents stripped), BERT
 * pre-tokenizer, WordPiece model, `[CLS] $A [SEP]` template.
 */
export function wordPieceTokenizerJson(vocab: ReadonlyMap<string, number>): object {
  const special = (token: keyof typeof SPECIALS) => ({ id: token, ids: [SPECIALS[token]], tokens: [token] });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: Object.entries(SPECIALS).map(([content, id]) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: { '[CLS]': special('[CLS]'), '[SEP]': special('[SEP]') },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(vocab),
    },
  };
}
