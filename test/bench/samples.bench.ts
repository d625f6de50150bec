/**
 * Samples and graders' cost (issue 27): the quickstart trained through a real cloud and worker
 * (svc-tiny, its data and settings: 60 steps, a checkpoint every 20), once with samples off
 * (`samples.count: 0`) and once with the default 8 (answered at step 0, 20, 40 and 60, graded),
 * alternating. Wall time is the job's, from its start (training.started) to its end (what the
 * user waits for once the worker has the model), on the worker's default backend. Goal: at most 1.10×.
 * SVC_BENCH_SAMPLES_ROUNDS (default 1) pairs; the ratio is of the medians.
 */
import { QUICKSTART_HYPERPARAMETERS } from "../../engine/train/quickstart.js";
import type { JobConfig } from "../../sdk/wire.js";
import { newAccount, trainToEnd, uploadQuickstartData } from "../support/api.js";
import { startTestCloud } from "../support/cloud.js";

const rounds = Number(process.env.SVC_BENCH_SAMPLES_ROUNDS ?? 1);
const cloud = await startTestCloud({ workers: 1 });
try {
  const account = await newAccount(cloud);
  const datasets = await uploadQuickstartData(account.client);
  // The quickstart's hyper-parameters are the engine's, which names LoRA modules as plain strings.
  const config = { model: "svc-tiny", ...QUICKSTART_HYPERPARAMETERS, seed: 42, schedule: "cosine", graders: [{ type: "json_valid" }] } as JobConfig;

  async function run(count: number): Promise<{ wall: number; sampling: number; rates: string }> {
    const { job, events } = await trainToEnd(account.client, {
      name: `samples-${count}`,
      ...datasets,
      config: { ...config, samples: { count, maxTokens: 128 } },
    });
    const wall = (Date.parse(job.finishedAt ?? "") - Date.parse(job.startedAt ?? "")) / 1000;
    if (!Number.isFinite(wall)) throw new Error(`job ${job.id} has no start or end time`);
    const samples = events.filter((e) => e.type === "samples.graded").map((e) => e.data as { step: number; seconds: number; passRate: number | null });
    return {
      wall,
      sampling: samples.reduce((sum, s) => sum + s.seconds, 0),
      rates: samples.map((s) => `${s.step}:${s.passRate === null ? "—" : Math.round(s.passRate * 100)}%`).join(" "),
    };
  }

  const off: number[] = [];
  const on: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const a = await run(0);
    const b = await run(8);
    off.push(a.wall);
    on.push(b.wall);
    console.log(
      `round ${round + 1}`.padEnd(44),
      `off ${a.wall.toFixed(1)} s | on ${b.wall.toFixed(1)} s (answering and grading ${b.sampling.toFixed(1)} s; pass rate ${b.rates})`,
    );
  }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
  const ratio = median(on) / median(off);
  console.log(
    "quickstart wall, samples on / off (N=8)".padEnd(44),
    `${median(on).toFixed(1)} s / ${median(off).toFixed(1)} s | ratio ${ratio.toFixed(3)} | goal ≤ 1.10 ${ratio <= 1.1 ? "met" : "NOT met"}`,
  );
} finally {
  await cloud.dispose();
}
