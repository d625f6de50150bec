/**
 * RMSNorm and the SwiGLU gate as custom-gradient ops, their backward passes written out.
 *
 * Why: tfjs's autodiff of the few-op forms saves a copy of every input of every op (a real copy
 * on tfjs-wasm, whose Identity kernel copies), casts the inputs of every multiply's gradient (a
 * copy again), and the gradient of `mean` multiplies a [rows, 1] column by a [rows, d] matrix,
 * an operand order that tfjs-wasm broadcasts far more slowly than the other.
 */
import { tf } from '../backend.js';

/**
 * x [rows, d] -> x · rsqrt(mean(x²) + eps) · weight, each row on its own. With x̂ = x · r and
 * g = dy · weight: dx = r · (g − x̂ · mean(g · x̂)), dweight = Σ_rows dy · x̂.
 * A frozen weight (LoRA) is a constant of the op, so no gradient is made for it.
 */
export function rmsNorm(x: tf.Tensor2D, weight: tf.Tensor, eps: number, frozenWeight: boolean): tf.Tensor2D {
  const forward = (xIn: tf.Tensor2D, w: tf.Tensor, save: tf.GradSaveFunc) => {
    const r = xIn.square().mean(-1, true).add(eps).rsqrt();
    save([xIn, r]);
    return {
      value: xIn.mul(r).mul(w),
      gradFunc: (dy: tf.Tensor2D, [savedX, savedR]: tf.Tensor[]) => {
        const normalised = savedX.mul(savedR);
        const g = dy.mul(w);
        const dx = g.sub(normalised.mul(g.mul(normalised).mean(-1, true))).mul(savedR);
        return frozenWeight ? [dx] : [dx, dy.mul(normalised).sum(0)];
      },
    };
  };
  if (frozenWeight) {
    const op = tf.customGrad(((xIn: tf.Tensor2D, save: tf.GradSaveFunc) => forward(xIn, weight, save)) as unknown as Parameters<typeof tf.customGrad>[0]);
    return op(x) as tf.Tensor2D;
  }
  const op = tf.customGrad(forward as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(x, weight) as tf.Tensor2D;
}

/**
 * silu(gate) ⊙ up, with s = sigmoid(gate) and silu = gate ⊙ s:
 *   d_up = dy ⊙ silu,  d_gate = dy ⊙ up ⊙ (s + silu − silu ⊙ s).
 * Autodiff of the three-op form saved five [tokens, ff] tensors and cast four; this saves two
 * and recomputes the sigmoid.
 */
export const swiglu = tf.customGrad(((gate: tf.Tensor, up: tf.Tensor, save: tf.GradSaveFunc) => {
  save([gate, up]);
  return {
    value: gate.mul(gate.sigmoid()).mul(up),
    gradFunc: (dy: tf.Tensor, [g, u]: tf.Tensor[]) => {
      const s = g.sigmoid();
      const silu = g.mul(s);
      return [dy.mul(u).mul(s.add(silu).sub(silu.mul(s))), dy.mul(silu)];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as (gate: tf.Tensor2D, up: tf.Tensor2D) => tf.Tensor2D;
