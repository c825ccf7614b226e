import { ProtobufWriter } from './protobuf-writer';

/** ONNX element types used here (onnx.proto TensorProto.DataType). */
export const ONNX_FLOAT = 1;
export const ONNX_INT8 = 3;
export const ONNX_INT64 = 7;

export type AttributeValue = number | readonly number[] | { readonly float: number };

interface OnnxNode {
  readonly op: string;
  readonly inputs: readonly string[];
  readonly outputs: readonly string[];
  readonly attributes: Record<string, AttributeValue>;
}

interface Initializer {
  readonly name: string;
  readonly dims: readonly number[];
  readonly type: number;
  readonly data: Uint8Array;
}

interface GraphValue {
  readonly name: string;
  readonly type: number;
  /** A number is a fixed size, a string a named dynamic dimension. */
  readonly shape: ReadonlyArray<number | string>;
}

/**
 * Builds an ONNX model graph node by node and serialises it (onnx.proto field numbers). Only
 * what a transformer encoder needs: tensor initializers, int/ints/float attributes, typed
 * inputs and outputs.
 */
export class OnnxGraph {
  private readonly nodes: OnnxNode[] = [];
  private readonly initializers: Initializer[] = [];
  private readonly inputs: GraphValue[] = [];
  private readonly outputs: GraphValue[] = [];
  private counter = 0;

  input(name: string, type: number, shape: ReadonlyArray<number | string>): string {
    this.inputs.push({ name, type, shape });
    return name;
  }

  output(name: string, type: number, shape: ReadonlyArray<number | string>): void {
    this.outputs.push({ name, type, shape });
  }

  floats(name: string, dims: readonly number[], values: Float32Array): string {
    this.initializers.push({ name, dims, type: ONNX_FLOAT, data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) });
    return name;
  }

  int8s(name: string, dims: readonly number[], values: Int8Array): string {
    this.initializers.push({ name, dims, type: ONNX_INT8, data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength) });
    return name;
  }

  int64s(name: string, values: readonly number[]): string {
    const data = new BigInt64Array(values.map((v) => BigInt(v)));
    this.initializers.push({ name, dims: [values.length], type: ONNX_INT64, data: new Uint8Array(data.buffer) });
    return name;
  }

  /** Adds a node and returns the name of its output. */
  node(op: string, inputs: readonly string[], attributes: Record<string, AttributeValue> = {}, outputName?: string): string {
    const output = outputName ?? `${op.toLowerCase()}_${this.counter++}`;
    this.nodes.push({ op, inputs, outputs: [output], attributes });
    return output;
  }

  /** Adds a node with several outputs and returns their names. */
  nodeOutputs(op: string, inputs: readonly string[], count: number): string[] {
    const base = `${op.toLowerCase()}_${this.counter++}`;
    const outputs = Array.from({ length: count }, (_, i) => `${base}_${i}`);
    this.nodes.push({ op, inputs, outputs, attributes: {} });
    return outputs;
  }

  serialize(opsetVersion: number, producer: string): Uint8Array {
    const model = new ProtobufWriter();
    model.int(1, 8); // ir_version
    model.string(2, producer);
    model.message(7, (graph) => {
      for (const node of this.nodes) graph.message(1, (w) => writeNode(w, node));
      graph.string(2, 'main');
      for (const init of this.initializers) graph.message(5, (w) => writeInitializer(w, init));
      for (const value of this.inputs) graph.message(11, (w) => writeValue(w, value));
      for (const value of this.outputs) graph.message(12, (w) => writeValue(w, value));
    });
    model.message(8, (opset) => opset.string(1, '').int(2, opsetVersion));
    return model.finish();
  }
}

function writeNode(w: ProtobufWriter, node: OnnxNode): void {
  for (const input of node.inputs) w.string(1, input);
  for (const output of node.outputs) w.string(2, output);
  w.string(4, node.op);
  for (const [name, value] of Object.entries(node.attributes)) {
    w.message(5, (a) => {
      a.string(1, name);
      if (typeof value === 'number') a.int(3, value).int(20, 2);
      else if ('float' in value) a.float(2, value.float).int(20, 1);
      else {
        for (const v of value) a.int(8, v);
        a.int(20, 7);
      }
    });
  }
}

function writeInitializer(w: ProtobufWriter, init: Initializer): void {
  for (const dim of init.dims) w.int(1, dim);
  w.int(2, init.type);
  w.string(8, init.name);
  w.bytes(9, init.data);
}

function writeValue(w: ProtobufWriter, value: GraphValue): void {
  w.string(1, value.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.int(1, value.type);
      tensor.message(2, (shape) => {
        for (const dim of value.shape) shape.message(1, (d) => (typeof dim === 'number' ? d.int(1, dim) : d.string(2, dim)));
      });
    }),
  );
}
