// The scan kernel's internals (the WebAssembly module, its memory) stay behind VectorIndex: callers
// choose a kernel by name only.
export * from './vector-index';
export type { ScanKernel } from './vector-kernel';
export * from './vector-math';
export * from './stamp-digest';
