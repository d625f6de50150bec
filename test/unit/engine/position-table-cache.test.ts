/**
 * The RoPE and causal-mask tables are cached per sequence length; a long-lived worker meets many
 * lengths across jobs, so the cache holds a few and frees the masks of those it drops.
 */
import assert from 'node:assert/strict';
import { initTf, tf } from '../../../engine/backend.js';
import { TEST_TINY } from '../../../engine/model/config.js';
import { BoundedCache } from '../../../engine/model/boundedCache.js';
import { cachedPositionTableCount, POSITION_TABLE_CACHE_ENTRIES, positionTables } from '../../../engine/model/forward.js';

describe('position table cache', () => {
  before(async () => {
    await initTf();
  });

  it('keeps at most a few lengths, however many batches of new lengths come', () => {
    const tensorsBefore = tf.memory().numTensors;
    const lengths = Array.from({ length: 40 }, (_, i) => 3 + i);
    const tables = lengths.map((length) => positionTables(TEST_TINY, length));
    assert.ok(cachedPositionTableCount() <= POSITION_TABLE_CACHE_ENTRIES, `cache holds ${cachedPositionTableCount()} entries`);
    // Only the masks still cached are alive: the others were freed when dropped.
    const alive = tables.filter((t) => !t.causalMask.isDisposed).length;
    assert.equal(alive, Math.min(POSITION_TABLE_CACHE_ENTRIES, lengths.length));
    assert.ok(tf.memory().numTensors - tensorsBefore <= POSITION_TABLE_CACHE_ENTRIES);
    // The most recent lengths are the ones kept, and a hit returns the same tables.
    const last = lengths[lengths.length - 1];
    assert.equal(positionTables(TEST_TINY, last), tables[tables.length - 1]);
  });

  it('drops the least recently used entry, not the oldest inserted', () => {
    const dropped: string[] = [];
    const cache = new BoundedCache<number, string>(2, (value) => dropped.push(value));
    cache.set(1, 'one');
    cache.set(2, 'two');
    assert.equal(cache.get(1), 'one'); // 1 is now the most recently used
    cache.set(3, 'three');
    assert.deepEqual(dropped, ['two']);
    assert.equal(cache.has(1), true);
    assert.equal(cache.has(2), false);
    assert.equal(cache.size, 2);
  });
});
