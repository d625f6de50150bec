/**
 * Reading tensors into JavaScript and making them from it without needless copies, for the
 * custom ops that do part of their work in plain loops (attention.ts, loss.ts, forward.ts).
 */
import { tf } from '../backend.js';

interface HeapBackend {
  typedArrayFromHeap?: (info: tf.Tensor) => Float32Array;
}

/**
 * The values of a tensor, for a caller that reads them at once and keeps nothing: on tfjs-wasm
 * a view of its heap (no copy; any allocation may move the heap, so the caller makes no tensor
 * while it reads), elsewhere a copy.
 */
export function peek(t: tf.Tensor): Float32Array {
  const backend = tf.backend() as unknown as HeapBackend;
  return backend.typedArrayFromHeap ? backend.typedArrayFromHeap(t) : (t.dataSync() as Float32Array);
}

/**
 * A source of scratch arrays of one size for tensors about to be made from them. tfjs-wasm
 * copies an array into its heap when a tensor is made from it, so there one array serves every
 * use; other backends may keep the array they are given, so there each use gets its own.
 */
export function scratch(size: number): () => Float32Array {
  const copiesOnWrite = typeof (tf.backend() as unknown as HeapBackend).typedArrayFromHeap === 'function';
  const shared = copiesOnWrite ? new Float32Array(size) : undefined;
  return () => shared ?? new Float32Array(size);
}
