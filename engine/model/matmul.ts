/**
 * 2-D matrix product whose backward pass stays on the wasm backend's fast path.
 *
 * tfjs-wasm runs a·b through XNNPACK only when neither operand is transposed and there is no
 * batch dimension; `matMul(a, b, transposeA, transposeB)` and batched products fall back to a
 * naive loop. tfjs' built-in matMul gradient uses exactly those transposed forms, which makes the
 * backward pass far slower than the forward one. Here the gradients
 * materialise the transpose first (cheap) and then use the fast untransposed product.
 */
import { tf } from '../backend.js';

const fastMatMul = tf.customGrad(((a: tf.Tensor, b: tf.Tensor, save: tf.GradSaveFunc) => {
  save([a, b]);
  return {
    value: tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [savedA, savedB] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [tf.matMul(dy as tf.Tensor2D, savedB.transpose()), tf.matMul(savedA.transpose(), dy as tf.Tensor2D)];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]);

/** a [m, k] · b [k, n] -> [m, n], differentiable in both operands. */
export function matMul2d(a: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  return fastMatMul(a, b) as tf.Tensor2D;
}

/**
 * x [m, k] · w [k, n] where w is frozen (LoRA training): only x gets a gradient. With matMul2d the
 * backward pass would also compute the weight gradient, a full-size product that LoRA discards.
 */
export function matMul2dFrozen(x: tf.Tensor, w: tf.Tensor): tf.Tensor2D {
  const op = tf.customGrad(((input: tf.Tensor) => ({
    value: tf.matMul(input as tf.Tensor2D, w as tf.Tensor2D),
    gradFunc: (dy: tf.Tensor) => tf.matMul(dy as tf.Tensor2D, frozenTranspose(w)),
  })) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(x) as tf.Tensor2D;
}

/**
 * The LoRA update of a projection, ((x·A)·B)·scaling (x [m, in], A [in, r], B [r, out]), with a
 * backward pass that transposes only r-wide matrices:
 *   h = dy·Bᵀ·scaling,  dx = h·Aᵀ,  dA = (hᵀ·x)ᵀ,  dB = ((x·A)ᵀ·dy)·scaling.
 * Plain autodiff of the same expression transposed the [m, in] activation for dA and saved (so
 * copied, on tfjs-wasm) both x and x·A; x·A is recomputed here instead (an r-wide product).
 */
export function loraDelta(x: tf.Tensor2D, a: tf.Tensor2D, b: tf.Tensor2D, scaling: number): tf.Tensor2D {
  const op = tf.customGrad(((xIn: tf.Tensor2D, aIn: tf.Tensor2D, bIn: tf.Tensor2D, save: tf.GradSaveFunc) => {
    // tf.grads disposes the forward pass's intermediates before the backward pass: what the
    // gradient reads must be saved (A and B are the trainable tensors themselves: they stay).
    save([xIn]);
    return {
      value: tf.matMul(tf.matMul(xIn, aIn), bIn).mul(scaling),
      gradFunc: (dy: tf.Tensor2D, [savedX]: tf.Tensor[]) => {
        const h = tf.matMul(dy, bIn.transpose()).mul(scaling) as tf.Tensor2D;
        const dx = tf.matMul(h, aIn.transpose());
        const dA = tf.matMul(h.transpose(), savedX as tf.Tensor2D).transpose();
        const dB = tf.matMul(tf.matMul(savedX as tf.Tensor2D, aIn).transpose(), dy).mul(scaling);
        return [dx, dA, dB];
      },
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(x, a, b) as tf.Tensor2D;
}

/**
 * A frozen weight never changes, so its transpose (needed by every backward pass) is made once
 * and kept beside it; it is freed with the weight's record (engine/model/weights.ts disposeWeights).
 */
const transposes = new WeakMap<tf.Tensor, tf.Tensor2D>();
/** Each kept transpose's weight: the transpose of a kept transpose is that weight, not a third copy. */
const originals = new WeakMap<tf.Tensor, tf.Tensor2D>();
export function frozenTranspose(w: tf.Tensor): tf.Tensor2D {
  const original = originals.get(w);
  if (original && !original.isDisposed) return original;
  const cached = transposes.get(w);
  if (cached && !cached.isDisposed) return cached;
  const t = tf.keep((w as tf.Tensor2D).transpose() as tf.Tensor2D);
  transposes.set(w, t);
  originals.set(t, w as tf.Tensor2D);
  return t;
}

export function disposeFrozenTranspose(w: tf.Tensor): void {
  const t = transposes.get(w);
  if (t) originals.delete(t);
  t?.dispose();
  transposes.delete(w);
}
