/**
 * Selects the tfjs backend once per process. The wasm backend runs vectorised kernels where the
 * pure-JS cpu backend runs scalar loops; tfjs-node cannot be installed offline. The umbrella
 * @tensorflow/tfjs package is required because tfjs-core alone registers no gradients.
 */
import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

let ready: Promise<typeof tf> | undefined;

/** Resolves to tfjs with the wasm backend active. Safe to call many times. */
export function initTf(): Promise<typeof tf> {
  ready ??= (async () => {
    if (tf.getBackend() !== 'wasm') {
      const ok = await tf.setBackend('wasm');
      if (!ok) throw new Error('tfjs wasm backend failed to initialise');
    }
    await tf.ready();
    return tf;
  })();
  return ready;
}

export { tf };
