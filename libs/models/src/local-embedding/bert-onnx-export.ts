import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ONNX_FLOAT, ONNX_INT64, OnnxGraph } from './onnx-graph';
import { readSafetensors } from './safetensors';
import type { SafeTensor } from './safetensors';

/** The parts of a Hugging Face BERT `config.json` the encoder graph needs. */
interface BertConfig {
  readonly hidden_size: number;
  readonly num_hidden_layers: number;
  readonly num_attention_heads: number;
  readonly intermediate_size: number;
  readonly layer_norm_eps?: number;
  readonly hidden_act?: string;
  readonly model_type?: string;
}

/**
 * Writes `onnx/model.onnx` for a BERT-family sentence encoder given as a Hugging Face
 * directory (`config.json` + `model.safetensors`), the form registry packages ship models in.
 * The graph takes `input_ids`, `attention_mask` and `token_type_ids` ([batch, sequence],
 * int64) and returns `last_hidden_state` ([batch, sequence, hidden]), the same interface as
 * the ONNX exports published with these models, so pooling stays outside the graph.
 */
export function exportBertToOnnx(modelDir: string, outputPath = join(modelDir, 'onnx', 'model.onnx'), options: { quantize?: boolean } = {}): string {
  const config = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8')) as BertConfig;
  if (config.model_type !== undefined && config.model_type !== 'bert') {
    throw new Error(`${modelDir}: model_type "${config.model_type}" cannot be converted (BERT encoders only); supply onnx/model.onnx`);
  }
  if ((config.hidden_act ?? 'gelu') !== 'gelu') throw new Error(`${modelDir}: activation ${config.hidden_act} is not supported (gelu only)`);
  const weightsPath = join(modelDir, 'model.safetensors');
  if (!existsSync(weightsPath)) throw new Error(`${modelDir} has neither onnx/model.onnx nor model.safetensors`);
  const tensors = readSafetensors(weightsPath);
  const graph = buildBertGraph(config, options.quantize ?? false, (name) => {
    const tensor = tensors.get(name) ?? tensors.get(`bert.${name}`);
    if (!tensor) throw new Error(`${weightsPath} has no tensor ${name}: not a BERT checkpoint, or truncated`);
    return tensor;
  });
  mkdirSync(dirname(outputPath), { recursive: true });
  const temporary = `${outputPath}.${process.pid}.tmp`;
  writeFileSync(temporary, graph.serialize(17, 'trellis-bert-export'));
  renameSync(temporary, outputPath);
  return outputPath;
}

function buildBertGraph(config: BertConfig, quantize: boolean, weight: (name: string) => SafeTensor): OnnxGraph {
  const g = new OnnxGraph();
  const hidden = config.hidden_size;
  const heads = config.num_attention_heads;
  const headSize = hidden / heads;
  const epsilon = { float: config.layer_norm_eps ?? 1e-12 };
  const param = (name: string) => g.floats(name, weight(name).shape, weight(name).values);
  /** A Linear layer: x · Wᵀ + b, with Wᵀ stored so MatMul needs no Transpose node. */
  const linear = (x: string, prefix: string) => {
    const w = weight(`${prefix}.weight`);
    const [out, inp] = w.shape as [number, number];
    const transposed = new Float32Array(w.values.length);
    for (let o = 0; o < out; o++) for (let i = 0; i < inp; i++) transposed[i * out + o] = w.values[o * inp + i]!;
    const product = quantize ? quantizedMatMul(g, x, prefix, transposed, inp, out) : g.node('MatMul', [x, g.floats(`${prefix}.weight_t`, [inp, out], transposed)]);
    return g.node('Add', [product, param(`${prefix}.bias`)]);
  };
  const layerNorm = (x: string, prefix: string) =>
    g.node('LayerNormalization', [x, param(`${prefix}.weight`), param(`${prefix}.bias`)], { axis: -1, epsilon });

  const inputIds = g.input('input_ids', ONNX_INT64, ['batch', 'sequence']);
  const attentionMask = g.input('attention_mask', ONNX_INT64, ['batch', 'sequence']);
  const tokenTypes = g.input('token_type_ids', ONNX_INT64, ['batch', 'sequence']);

  // Embeddings: word + position (0..sequence-1) + token type, then LayerNorm.
  const zero = g.int64s('const_0', [0]);
  const one = g.int64s('const_1', [1]);
  const sequenceLength = g.node('Gather', [g.node('Shape', [inputIds]), one], { axis: 0 });
  const positions = g.node('Range', [g.node('Squeeze', [zero]), g.node('Squeeze', [sequenceLength]), g.node('Squeeze', [one])]);
  const words = g.node('Gather', [param('embeddings.word_embeddings.weight'), inputIds]);
  const placed = g.node('Add', [words, g.node('Gather', [param('embeddings.position_embeddings.weight'), positions])]);
  const typed = g.node('Add', [placed, g.node('Gather', [param('embeddings.token_type_embeddings.weight'), tokenTypes])]);
  let state = layerNorm(typed, 'embeddings.LayerNorm');

  // Padding positions get a large negative attention bias: (1 - mask) * -10000, as [batch, 1, 1, sequence].
  const maskFloat = g.node('Cast', [attentionMask], { to: ONNX_FLOAT });
  const inverted = g.node('Sub', [g.floats('const_one_f', [], Float32Array.of(1)), maskFloat]);
  const bias = g.node('Unsqueeze', [g.node('Mul', [inverted, g.floats('const_neg', [], Float32Array.of(-10000))]), g.int64s('axes_1_2', [1, 2])]);
  const splitHeads = g.int64s('shape_heads', [0, 0, heads, headSize]);
  const mergeHeads = g.int64s('shape_merged', [0, 0, hidden]);
  const scale = g.floats('const_scale', [], Float32Array.of(1 / Math.sqrt(headSize)));
  const half = g.floats('const_half', [], Float32Array.of(0.5));
  const sqrt2 = g.floats('const_sqrt2', [], Float32Array.of(Math.SQRT2));
  const oneF = 'const_one_f';

  for (let layer = 0; layer < config.num_hidden_layers; layer++) {
    const p = `encoder.layer.${layer}`;
    const heads4 = (x: string, perm: number[]) => g.node('Transpose', [g.node('Reshape', [x, splitHeads])], { perm });
    const q = heads4(linear(state, `${p}.attention.self.query`), [0, 2, 1, 3]);
    const k = heads4(linear(state, `${p}.attention.self.key`), [0, 2, 3, 1]);
    const v = heads4(linear(state, `${p}.attention.self.value`), [0, 2, 1, 3]);
    const scores = g.node('Add', [g.node('Mul', [g.node('MatMul', [q, k]), scale]), bias]);
    const context = g.node('MatMul', [g.node('Softmax', [scores], { axis: -1 }), v]);
    const merged = g.node('Reshape', [g.node('Transpose', [context], { perm: [0, 2, 1, 3] }), mergeHeads]);
    const attended = layerNorm(g.node('Add', [linear(merged, `${p}.attention.output.dense`), state]), `${p}.attention.output.LayerNorm`);
    // GELU (erf form): x · 0.5 · (1 + erf(x / √2)).
    const up = linear(attended, `${p}.intermediate.dense`);
    const gelu = g.node('Mul', [g.node('Mul', [up, half]), g.node('Add', [g.node('Erf', [g.node('Div', [up, sqrt2])]), oneF])]);
    state = layerNorm(g.node('Add', [linear(gelu, `${p}.output.dense`), attended]), `${p}.output.LayerNorm`);
  }
  g.node('Identity', [state], {}, 'last_hidden_state');
  g.output('last_hidden_state', ONNX_FLOAT, ['batch', 'sequence', hidden]);
  return g;
}

/**
 * x · W with W stored as int8, one scale per output column, and x quantized to uint8 per run
 * (dynamic quantization): the DynamicQuantizeLinear → MatMulInteger → Cast → Mul pattern ONNX
 * Runtime fuses into one integer kernel, several times faster than float on CPUs with int8 dot
 * products. Embeddings and LayerNorms stay float.
 */
function quantizedMatMul(g: OnnxGraph, x: string, prefix: string, weights: Float32Array, rows: number, columns: number): string {
  const scales = new Float32Array(columns);
  for (let c = 0; c < columns; c++) {
    let max = 0;
    for (let r = 0; r < rows; r++) max = Math.max(max, Math.abs(weights[r * columns + c]!));
    scales[c] = max > 0 ? max / 127 : 1;
  }
  const quantized = new Int8Array(weights.length);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < columns; c++) quantized[r * columns + c] = Math.round(weights[r * columns + c]! / scales[c]!);
  }
  const [xq, xScale, xZero] = g.nodeOutputs('DynamicQuantizeLinear', [x], 3) as [string, string, string];
  const product = g.node('MatMulInteger', [xq, g.int8s(`${prefix}.weight_q`, [rows, columns], quantized), xZero]);
  const scale = g.node('Mul', [xScale, g.floats(`${prefix}.weight_scale`, [columns], scales)]);
  return g.node('Mul', [g.node('Cast', [product], { to: ONNX_FLOAT }), scale]);
}
