import { writeFileSync } from 'node:fs';
import { AttributeType, DataType, modelProto } from './onnx-schema.js';

/** The dimensions of a BERT encoder. */
export interface BertShape {
  readonly layers: number;
  readonly hidden: number;
  readonly heads: number;
  readonly intermediate: number;
  readonly vocab: number;
  readonly maxPositions: number;
  readonly typeVocab: number;
}

/** sentence-transformers/all-MiniLM-L6-v2's shape (its config.json). */
export const MINILM_L6_SHAPE: BertShape = { layers: 6, hidden: 384, heads: 12, intermediate: 1536, vocab: 30522, maxPositions: 512, typeVocab: 2 };

/** A seeded normal distribution (mulberry32 and Box-Muller): the same seed writes the same weights. */
function normal(seed: number): () => number {
  let state = seed >>> 0;
  const uniform = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

type Attribute =
  | { readonly name: string; readonly type: typeof AttributeType.INT; readonly i: number }
  | { readonly name: string; readonly type: typeof AttributeType.FLOAT; readonly f: number }
  | { readonly name: string; readonly type: typeof AttributeType.INTS; readonly ints: readonly number[] };

const int = (name: string, i: number): Attribute => ({ name, type: AttributeType.INT, i });
const float = (name: string, f: number): Attribute => ({ name, type: AttributeType.FLOAT, f });
const ints = (name: string, values: readonly number[]): Attribute => ({ name, type: AttributeType.INTS, ints: values });

/** Collects the nodes and initializers of one graph; each node has one output, named for its op. */
class GraphBuilder {
  readonly nodes: object[] = [];
  readonly initializers: object[] = [];
  private count = 0;

  constructor(private readonly random: () => number) {}

  /** A float32 initializer of normal(0, std) values, or of `fill` when given. */
  floats(name: string, dims: readonly number[], init: { std: number } | { fill: number }): string {
    const values = new Float32Array(dims.reduce((a, b) => a * b, 1));
    if ('fill' in init) values.fill(init.fill);
    else for (let i = 0; i < values.length; i++) values[i] = this.random() * init.std;
    // raw_data is little-endian, as Float32Array is on every platform Node runs on.
    this.initializers.push({ name, dims, data_type: DataType.FLOAT, raw_data: Buffer.from(values.buffer) });
    return name;
  }

  int64s(name: string, values: readonly number[], dims: readonly number[] = [values.length]): string {
    this.initializers.push({ name, dims, data_type: DataType.INT64, raw_data: Buffer.from(BigInt64Array.from(values, BigInt).buffer) });
    return name;
  }

  node(op: string, inputs: readonly string[], attribute: readonly Attribute[] = []): string {
    const output = `${op.toLowerCase()}_${this.count++}`;
    this.nodes.push({ op_type: op, name: output, input: inputs, output: [output], attribute });
    return output;
  }
}

/**
 * An ONNX BERT sentence encoder with random weights, shaped like the exports of Hugging Face's
 * sentence-transformers models: inputs `input_ids`, `attention_mask`, `token_type_ids` (int64,
 * [batch, sequence]), output `last_hidden_state` (float32, [batch, sequence, hidden]); word,
 * position and token-type embeddings, then per layer multi-head self-attention (padding masked
 * out with -10000 before the softmax, as BERT does) and a GELU feed-forward, each with a residual
 * connection and layer norm. The same work per token as the real model of that shape; the
 * meaning is noise. Opset 17 (LayerNormalization is one op).
 */
export function bertModelBytes(shape: BertShape, seed = 1): Uint8Array {
  const { layers, hidden, heads, intermediate, vocab, maxPositions, typeVocab } = shape;
  if (hidden % heads !== 0) throw new Error(`hidden (${hidden}) must be a multiple of heads (${heads})`);
  const headSize = hidden / heads;
  const g = new GraphBuilder(normal(seed));
  const std = 0.02;

  const zero = g.int64s('zero', [0], []);
  const one = g.int64s('one', [1], []);
  const oneF = g.floats('one_f', [], { fill: 1 });
  const half = g.floats('half', [], { fill: 0.5 });
  const sqrt2 = g.floats('sqrt_2', [], { fill: Math.SQRT2 });
  const scale = g.floats('sqrt_head_size', [], { fill: Math.sqrt(headSize) });
  const maskedOut = g.floats('masked_out', [], { fill: -10_000 });
  const splitHeads = g.int64s('split_heads', [0, 0, heads, headSize]);
  const mergeHeads = g.int64s('merge_heads', [0, 0, hidden]);
  const maskAxes = g.int64s('mask_axes', [1, 2]);

  const layerNorm = (input: string, name: string): string =>
    g.node(
      'LayerNormalization',
      [input, g.floats(`${name}.weight`, [hidden], { fill: 1 }), g.floats(`${name}.bias`, [hidden], { fill: 0 })],
      [int('axis', -1), float('epsilon', 1e-12)],
    );
  const linear = (input: string, name: string, inputs: number, outputs: number): string =>
    g.node('Add', [g.node('MatMul', [input, g.floats(`${name}.weight`, [inputs, outputs], { std })]), g.floats(`${name}.bias`, [outputs], { std })]);

  // Embeddings: word + position + token type, then layer norm.
  const words = g.node('Gather', [g.floats('embeddings.word_embeddings.weight', [vocab, hidden], { std }), 'input_ids']);
  const sequence = g.node('Gather', [g.node('Shape', ['input_ids']), one]);
  const positions = g.node('Gather', [
    g.floats('embeddings.position_embeddings.weight', [maxPositions, hidden], { std }),
    g.node('Range', [zero, sequence, one]),
  ]);
  const types = g.node('Gather', [g.floats('embeddings.token_type_embeddings.weight', [typeVocab, hidden], { std }), 'token_type_ids']);
  let x = layerNorm(g.node('Add', [g.node('Add', [words, positions]), types]), 'embeddings.LayerNorm');

  // [batch, 1, 1, sequence]: 0 where a token is attended to, -10000 where it is padding.
  const mask = g.node('Unsqueeze', [g.node('Cast', ['attention_mask'], [int('to', DataType.FLOAT)]), maskAxes]);
  const maskBias = g.node('Mul', [g.node('Sub', [oneF, mask]), maskedOut]);

  for (let layer = 0; layer < layers; layer++) {
    const p = `encoder.layer.${layer}`;
    const heads4 = (input: string, perm: readonly number[]): string =>
      g.node('Transpose', [g.node('Reshape', [input, splitHeads])], [ints('perm', perm)]);
    const query = heads4(linear(x, `${p}.attention.self.query`, hidden, hidden), [0, 2, 1, 3]);
    const key = heads4(linear(x, `${p}.attention.self.key`, hidden, hidden), [0, 2, 3, 1]);
    const value = heads4(linear(x, `${p}.attention.self.value`, hidden, hidden), [0, 2, 1, 3]);
    const scores = g.node('Add', [g.node('Div', [g.node('MatMul', [query, key]), scale]), maskBias]);
    const probabilities = g.node('Softmax', [scores], [int('axis', -1)]);
    const context = g.node('Reshape', [g.node('Transpose', [g.node('MatMul', [probabilities, value])], [ints('perm', [0, 2, 1, 3])]), mergeHeads]);
    const attended = layerNorm(g.node('Add', [linear(context, `${p}.attention.output.dense`, hidden, hidden), x]), `${p}.attention.output.LayerNorm`);
    const inner = linear(attended, `${p}.intermediate.dense`, hidden, intermediate);
    // GELU as BERT computes it: 0.5 * x * (1 + erf(x / sqrt(2))).
    const gelu = g.node('Mul', [g.node('Mul', [inner, g.node('Add', [g.node('Erf', [g.node('Div', [inner, sqrt2])]), oneF])]), half]);
    x = layerNorm(g.node('Add', [linear(gelu, `${p}.output.dense`, intermediate, hidden), attended]), `${p}.output.LayerNorm`);
  }
  g.nodes.push({ op_type: 'Identity', name: 'last_hidden_state', input: [x], output: ['last_hidden_state'] });

  const tensor = (name: string, elemType: number, dims: readonly (number | string)[]): object => ({
    name,
    type: {
      tensor_type: {
        elem_type: elemType,
        shape: { dim: dims.map((dim) => (typeof dim === 'number' ? { dim_value: dim } : { dim_param: dim })) },
      },
    },
  });
  const ModelProto = modelProto();
  const model = ModelProto.create({
    ir_version: 8,
    producer_name: 'engram-test-model',
    doc_string: `random-weight BERT encoder ${JSON.stringify(shape)} seed ${seed}`,
    opset_import: [{ domain: '', version: 17 }],
    graph: {
      name: 'bert',
      node: g.nodes,
      initializer: g.initializers,
      input: ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => tensor(name, DataType.INT64, ['batch', 'sequence'])),
      output: [tensor('last_hidden_state', DataType.FLOAT, ['batch', 'sequence', hidden])],
    },
  });
  return ModelProto.encode(model).finish();
}

/** Writes bertModelBytes(shape, seed) to `path`. */
export function writeBertModel(path: string, shape: BertShape, seed = 1): void {
  writeFileSync(path, bertModelBytes(shape, seed));
}
