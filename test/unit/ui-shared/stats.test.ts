import assert from "node:assert/strict";
import { computeStats, formatStat, percentile, studentTQuantile } from "../../../ui-shared/stats.js";

const close = (actual: number | undefined, expected: number, tolerance = 1e-9) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) <= tolerance * Math.max(1, Math.abs(expected)), `${actual} != ${expected}`);

describe("ui-shared/stats", () => {
  it("t quantiles match scipy for every df the spec uses", () => {
    // python3 -c "from scipy import stats; print([float(stats.t.ppf(0.975, df)) for df in [1,2,3,4,5,10,20,30]])"
    const expected: [number, number][] = [
      [1, 12.706204736174694],
      [2, 4.302652729749462],
      [3, 3.1824463052837078],
      [4, 2.7764451051977934],
      [5, 2.5705818356363146],
      [10, 2.228138851986274],
      [20, 2.085963447265864],
      [30, 2.0422724563012378],
    ];
    for (const [df, t] of expected) close(studentTQuantile(0.975, df), t, 1e-10);
  });

  it("matches numpy on a ten-point loss series", () => {
    const a = [2.31, 2.05, 1.98, 1.77, 1.8, 1.62, 1.55, 1.49, 1.51, 1.4];
    const s = computeStats(a);
    assert.equal(s.n, 10);
    close(s.mean, 1.748); // a.mean()
    close(s.std, 0.29134935119962846); // a.std(ddof=1)
    close(s.variance, 0.08488444444444444); // a.var(ddof=1)
    close(s.p90, 2.0759999999999996); // np.percentile(a, 90)
    close(s.p95, 2.1929999999999996); // np.percentile(a, 95)
    close(s.ciHalfWidth, 0.20841877043072676); // stats.t.ppf(0.975, 9) * a.std(ddof=1) / np.sqrt(10)
  });

  it("uses t with df = 1 for two points", () => {
    const s = computeStats([3, 1]);
    close(s.mean, 2);
    close(s.std, Math.SQRT2); // np.std([3, 1], ddof=1)
    close(s.variance, 2);
    close(s.p90, 2.8); // np.percentile([3, 1], 90)
    close(s.p95, 2.9);
    close(s.ciHalfWidth, 12.706204736174694); // stats.t.ppf(0.975, 1) * sqrt(2) / sqrt(2)
  });

  it("keeps t at n = 31 and switches to z = 1.96 at n = 32 and above", () => {
    const series = (n: number) => Array.from({ length: n }, (_, i) => ((i * 37) % 101) / 10);
    // d = np.array([(i*37 % 101)/10 for i in range(31)]); stats.t.ppf(0.975, 30) * d.std(ddof=1) / np.sqrt(31)
    close(computeStats(series(31)).ciHalfWidth, 1.1202413057031415);
    // c = np.array([(i*37 % 101)/10 for i in range(40)]); 1.96 * c.std(ddof=1) / np.sqrt(40)
    const forty = computeStats(series(40));
    close(forty.ciHalfWidth, 0.9254499617995949);
    close(forty.mean, 4.984999999999999);
    close(forty.variance, 8.91771794871795);
    close(forty.p90, 9.030000000000001); // np.percentile(c, 90)
    close(forty.p95, 9.415);
  });

  it("gives explicit undefined values for n = 0 and n = 1, never NaN", () => {
    const empty = computeStats([]);
    assert.deepEqual(empty, { n: 0, mean: undefined, ciHalfWidth: undefined, std: undefined, variance: undefined, p90: undefined, p95: undefined });
    const one = computeStats([4.2]);
    assert.equal(one.mean, 4.2);
    assert.equal(one.p90, 4.2); // np.percentile([4.2], 90)
    assert.equal(one.std, undefined);
    assert.equal(one.variance, undefined);
    assert.equal(one.ciHalfWidth, undefined);
    assert.equal(formatStat(one.std), "—");
    assert.equal(formatStat(one.mean), "4.2000");
  });

  it("percentile interpolates linearly regardless of input order", () => {
    assert.equal(percentile([4, 1, 3, 2], 50), 2.5); // np.percentile([4,1,3,2], 50)
    assert.equal(percentile([], 50), undefined);
  });

  // Its speed on 100,000 points is measured in `npm run bench -- responsiveness`.
  it("summarises 100,000 points", () => {
    const values = Array.from({ length: 100_000 }, (_, i) => Math.sin(i) + 2);
    const s = computeStats(values);
    assert.ok(s.std !== undefined && s.std > 0);
  });
});
