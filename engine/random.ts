/**
 * A tiny seeded PRNG (mulberry32) used for everything that must be reproducible: weight
 * initialisation, batch order, sampling in the tfjs reference. We do not use tfjs' own random
 * ops so that a seed means the same numbers regardless of backend or tfjs version.
 */
export class SeededRandom {
  private state: number;

  constructor(seed: number) {
    // Mix the seed so that nearby seeds (0, 1, 2) give unrelated streams.
    this.state = (Math.imul(seed >>> 0, 0x9e3779b1) ^ 0x85ebca6b) >>> 0;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal via Box-Muller. */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  normalArray(length: number, std: number): Float32Array {
    const out = new Float32Array(length);
    for (let i = 0; i < length; i++) out[i] = this.normal() * std;
    return out;
  }

  /** Fisher-Yates shuffle of a copy. */
  shuffled<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }
}
