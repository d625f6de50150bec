import assert from 'node:assert/strict';
import { StopStringMatcher } from '../../../engine/infer/stop-strings.js';
import { learningRateAt } from '../../../engine/train/schedule.js';

describe('engine/infer/stop-strings', () => {
  it('holds back a possible stop-string prefix and cuts at the stop string', () => {
    const matcher = new StopStringMatcher(['END']);
    assert.deepEqual(matcher.push('hello E'), { emit: 'hello ', stopped: false });
    assert.deepEqual(matcher.push('N'), { emit: '', stopped: false });
    assert.deepEqual(matcher.push('Dgame'), { emit: '', stopped: true });
  });

  it('releases held-back text when it turns out not to be a stop string', () => {
    const matcher = new StopStringMatcher(['END']);
    assert.deepEqual(matcher.push('an E'), { emit: 'an ', stopped: false });
    assert.deepEqual(matcher.push('D!'), { emit: 'ED!', stopped: false });
    assert.deepEqual(matcher.push('xx E'), { emit: 'xx ', stopped: false });
    assert.equal(matcher.flush(), 'E');
  });

  it('stops at the earliest of several stop strings', () => {
    const matcher = new StopStringMatcher(['b', 'abc']);
    assert.deepEqual(matcher.push('xxabc'), { emit: 'xx', stopped: true });
  });
});

describe('engine/train/schedule', () => {
  it('warms up linearly, then decays (cosine, linear) to the floor', () => {
    const base = { peak: 1, totalSteps: 110, warmupSteps: 10, minRatio: 0.1 };
    assert.equal(learningRateAt(5, { ...base, kind: 'cosine' }), 0.5);
    assert.equal(learningRateAt(10, { ...base, kind: 'cosine' }), 1);
    assert.ok(Math.abs(learningRateAt(60, { ...base, kind: 'cosine' }) - 0.55) < 1e-9);
    assert.ok(Math.abs(learningRateAt(60, { ...base, kind: 'linear' }) - 0.55) < 1e-9);
    assert.ok(Math.abs(learningRateAt(110, { ...base, kind: 'cosine' }) - 0.1) < 1e-9);
    assert.ok(learningRateAt(35, { ...base, kind: 'cosine' }) > learningRateAt(35, { ...base, kind: 'linear' }));
  });
});
