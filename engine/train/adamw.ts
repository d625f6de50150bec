/**
 * AdamW with global-norm gradient clipping, over a record of plain tensors.
 *
 * We keep parameters as ordinary tensors (not tf.Variable) and replace them after each update:
 * tf.Variable names are global to the tfjs engine, which would make two models in one process
 * (base + test copies, several jobs in a worker) collide. Weight decay is decoupled (Loshchilov &
 * Hutter) and applied only to matrices, never to norm gains. The update is torch.optim.AdamW's,
 * so the torch backend (which runs that optimiser) takes the same steps: epsilon is added to the
 * bias-corrected sqrt(v), and the step size is lr / (1 - beta1^t).
 */
import { tf } from '../backend.js';

export interface AdamWOptions {
  beta1?: number;
  beta2?: number;
  epsilon?: number;
  weightDecay?: number;
  /** Clip the global gradient norm to this value; 0 disables clipping. Default 1. */
  maxGradNorm?: number;
}

export class AdamW {
  private readonly m = new Map<string, tf.Tensor>();
  private readonly v = new Map<string, tf.Tensor>();
  private step = 0;
  private readonly beta1: number;
  private readonly beta2: number;
  private readonly epsilon: number;
  private readonly weightDecay: number;
  private readonly maxGradNorm: number;

  constructor(options: AdamWOptions = {}) {
    this.beta1 = options.beta1 ?? 0.9;
    this.beta2 = options.beta2 ?? 0.999;
    this.epsilon = options.epsilon ?? 1e-8;
    this.weightDecay = options.weightDecay ?? 0;
    this.maxGradNorm = options.maxGradNorm ?? 1;
  }

  /**
   * Updates `params` in place (the record's tensors are replaced and the old ones disposed).
   * Disposes `grads`. Returns the gradient norm before clipping (a useful training signal).
   */
  apply(params: Record<string, tf.Tensor>, grads: Record<string, tf.Tensor>, learningRate: number): number {
    this.step++;
    const names = Object.keys(grads);
    const normTensor = tf.tidy(() => tf.addN(names.map((n) => grads[n].square().sum())).sqrt());
    const gradNorm = normTensor.dataSync()[0];
    normTensor.dispose();
    const clip = this.maxGradNorm > 0 && gradNorm > this.maxGradNorm ? this.maxGradNorm / (gradNorm + 1e-6) : 1;
    const stepSize = learningRate / (1 - this.beta1 ** this.step);
    const rootCorrection = Math.sqrt(1 - this.beta2 ** this.step);
    for (const name of names) {
      const param = params[name];
      const oldM = this.m.get(name);
      const oldV = this.v.get(name);
      const [m, v, updated] = tf.tidy(() => {
        const g = clip === 1 ? grads[name] : grads[name].mul(clip);
        const m = (oldM ?? tf.zerosLike(g)).mul(this.beta1).add(g.mul(1 - this.beta1));
        const v = (oldV ?? tf.zerosLike(g)).mul(this.beta2).add(g.square().mul(1 - this.beta2));
        let next = param.sub(m.div(v.sqrt().div(rootCorrection).add(this.epsilon)).mul(stepSize));
        if (this.weightDecay > 0 && param.rank >= 2) next = next.sub(param.mul(learningRate * this.weightDecay));
        return [m, v, next];
      });
      oldM?.dispose();
      oldV?.dispose();
      param.dispose();
      grads[name].dispose();
      this.m.set(name, m);
      this.v.set(name, v);
      params[name] = updated;
    }
    return gradNorm;
  }

  dispose(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) t.dispose();
    this.m.clear();
    this.v.clear();
  }
}
