/**
 * Turns tokenised examples into padded [B, T] input/target/mask tensors, and decides batch order.
 *
 * Each example is one conversation starting at position 0, exactly as at inference time (no
 * packing of several chats into one window). Batches are padded to their longest example, not to
 * the context, so short chats cost little. Inputs are ids[0..n-2], targets ids[1..n-1]; the mask
 * is the example's loss mask shifted the same way, and 0 on padding.
 */
import { tf } from '../backend.js';
import { SeededRandom } from '../random.js';
import { PAD_ID } from '../tokenizer.js';
import type { TokenBatch } from '../backends/types.js';

export interface TokenizedExample {
  ids: number[];
  lossMask: number[];
}

/**
 * Pads examples to one [B, T] batch of plain arrays (what crosses the compute-backend seam).
 * @param padId any valid token id; padded positions carry no loss.
 */
export function packBatch(examples: readonly TokenizedExample[], padId: number = PAD_ID): TokenBatch {
  const length = Math.max(...examples.map((e) => e.ids.length)) - 1;
  if (length < 1) throw new Error('examples need at least two tokens');
  const size = examples.length * length;
  const inputs = new Int32Array(size).fill(padId);
  const targets = new Int32Array(size).fill(padId);
  const mask = new Float32Array(size);
  let maskedTokens = 0;
  let tokens = 0;
  examples.forEach((example, row) => {
    for (let t = 0; t < example.ids.length - 1; t++) {
      inputs[row * length + t] = example.ids[t];
      targets[row * length + t] = example.ids[t + 1];
      mask[row * length + t] = example.lossMask[t + 1];
      maskedTokens += example.lossMask[t + 1];
      tokens++;
    }
  });
  return { batchSize: examples.length, length, inputs, targets, mask, maskedTokens, tokens };
}

/** A packed batch as tfjs tensors, for the tfjs model code. */
export interface Batch {
  inputs: tf.Tensor2D;
  targets: tf.Tensor2D;
  mask: tf.Tensor2D;
  /** Tokens that carry loss (for tokens/s and logging). */
  maskedTokens: number;
  /** Non-padding input tokens processed. */
  tokens: number;
}

export function toTensors(batch: TokenBatch): Batch {
  const shape: [number, number] = [batch.batchSize, batch.length];
  return {
    inputs: tf.tensor2d(batch.inputs, shape, 'int32'),
    targets: tf.tensor2d(batch.targets, shape, 'int32'),
    mask: tf.tensor2d(batch.mask, shape),
    maskedTokens: batch.maskedTokens,
    tokens: batch.tokens,
  };
}

export function makeBatch(examples: readonly TokenizedExample[], padId: number = PAD_ID): Batch {
  return toTensors(packBatch(examples, padId));
}

export function disposeBatch(batch: Batch): void {
  batch.inputs.dispose();
  batch.targets.dispose();
  batch.mask.dispose();
}

/**
 * Yields example indices batch by batch, epoch after epoch, reshuffled each epoch with a seeded
 * generator, so the order depends only on the seed. The last partial batch of an epoch wraps into
 * the next epoch's order rather than being dropped or shrunk (constant batch size).
 */
const SORT_WINDOW_BATCHES = 8;

export class BatchOrder {
  private readonly random: SeededRandom;
  private order: number[] = [];
  private cursor = 0;
  epoch = 0;
  /** Examples consumed so far, in units of the dataset size (fractional epoch for logs). */
  consumed = 0;

  /**
   * @param lengths when given, each epoch's shuffled order is sorted by length inside windows of
   *   `SORT_WINDOW_BATCHES` batches, so a batch holds similar lengths and wastes little padding
   *   (about a third of the compute on the pretraining corpus), while staying random across windows.
   */
  constructor(
    private readonly datasetSize: number,
    private readonly batchSize: number,
    seed: number,
    private readonly lengths?: readonly number[],
  ) {
    if (datasetSize < 1) throw new Error('empty dataset');
    this.random = new SeededRandom(seed);
  }

  private newEpochOrder(): number[] {
    const order = this.random.shuffled(Array.from({ length: this.datasetSize }, (_, i) => i));
    const lengths = this.lengths;
    if (!lengths) return order;
    const window = this.batchSize * SORT_WINDOW_BATCHES;
    const sorted: number[] = [];
    for (let start = 0; start < order.length; start += window) {
      sorted.push(...order.slice(start, start + window).sort((a, b) => lengths[a] - lengths[b] || a - b));
    }
    return sorted;
  }

  next(): number[] {
    const picked: number[] = [];
    while (picked.length < this.batchSize) {
      if (this.cursor >= this.order.length) {
        this.order = this.newEpochOrder();
        this.cursor = 0;
        if (this.consumed > 0) this.epoch++;
      }
      picked.push(this.order[this.cursor++]);
      this.consumed++;
    }
    return picked;
  }

  get epochProgress(): number {
    return this.consumed / this.datasetSize;
  }
}
