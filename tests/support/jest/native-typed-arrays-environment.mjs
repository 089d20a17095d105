// A Node test environment whose typed-array constructors are Node's own. Jest runs each spec in a
// VM context with its own Float32Array & co.; ONNX Runtime's native binding makes its output
// tensors' arrays in Node's realm, and onnxruntime-common's `instanceof Float32Array` check (made
// with the spec's constructor) refuses them. Specs that run ONNX Runtime in their own thread say
// `@jest-environment ./tests/support/jest/native-typed-arrays-environment.mjs` in their docblock.
import { TestEnvironment } from 'jest-environment-node';

const TYPED_ARRAYS = [
  'Int8Array',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int16Array',
  'Uint16Array',
  'Int32Array',
  'Uint32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
];

export default class NativeTypedArraysEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of TYPED_ARRAYS) this.global[name] = globalThis[name];
  }
}
