/**
 * The vLLM adapter push against real vLLM (issue 29, part 3), for a lent GPU machine:
 * `node --import tsx scripts/device/vllm-lora.ts` from the repo root, with node_modules present. Where `vllm` is not
 * importable by SVC_VLLM_PYTHON (default python3) it says so and exits 0.
 *
 * It trains the quickstart on svc-tiny for 4 steps in a real cloud (a checkpoint at step 2), writes svc-tiny as a
 * Hugging Face folder (transformers reads the GGUF), starts vLLM on it with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and
 * --enable-lora, registers it with a shared adapter folder, and runs what test/integration/vllm-adapters.test.ts runs
 * against the stand-in: deploy (loaded, listed by vLLM's /v1/models), chat by the openai-compatible edge, retarget
 * (old unloaded, new loaded), vLLM forgetting the adapter (reloaded by the next chat), delete (unloaded).
 * Writes $OUT/vllm-lora.json (or ./vllm-lora.json) and prints one table; exits 1 when a step fails.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";

const python = process.env.SVC_VLLM_PYTHON ?? "python3";
const outFile = path.join(process.env.OUT ?? ".", "vllm-lora.json");
const rows: { step: string; ok: boolean; detail: string }[] = [];
const children: ChildProcess[] = [];

function finish(extra: Record<string, unknown> = {}): never {
  const ok = rows.length > 0 && rows.every((r) => r.ok);
  writeFileSync(outFile, JSON.stringify({ ok, rows, ...extra }, null, 2) + "\n");
  console.log("| step | ok | detail |\n|---|---|---|");
  for (const r of rows) console.log(`| ${r.step} | ${r.ok ? "yes" : "NO"} | ${r.detail.replace(/\|/g, "/").slice(0, 200)} |`);
  for (const child of children) child.kill("SIGTERM");
  process.exit(extra.skipped || ok ? 0 : 1);
}

let vllmVersion: string;
try {
  vllmVersion = execFileSync(python, ["-c", "import vllm; print(vllm.__version__)"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
} catch {
  console.log(`vllm-lora: skipped, vllm is not importable by ${python} (set SVC_VLLM_PYTHON)`);
  writeFileSync(outFile, JSON.stringify({ skipped: `vllm is not importable by ${python}` }) + "\n");
  process.exit(0);
}

const { CloudClient } = await import("../../sdk/client.js");
const { freePort } = await import("../../test/support/ports.js");
const root = path.resolve(import.meta.dirname, "../..");
if (!existsSync(path.join(root, "dist", "cli.mjs"))) execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: root, stdio: "inherit" });
const tmp = mkdtempSync(path.join(os.tmpdir(), "svc-vllm-"));
const check = async (step: string, run: () => Promise<string>) => {
  try {
    rows.push({ step, ok: true, detail: await run() });
  } catch (err) {
    rows.push({ step, ok: false, detail: (err as Error).message });
    finish({ vllmVersion });
  }
};
const assert = (condition: unknown, message: string) => {
  if (!condition) throw new Error(message);
};
const until = async <T>(what: string, seconds: number, probe: () => Promise<T | undefined>): Promise<T> => {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`no ${what} in ${seconds} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
};

// The cloud, with one local training worker.
const dataDir = path.join(tmp, "cloud");
const cloudProcess = spawn(
  process.execPath,
  [path.join(root, "dist", "cli.mjs"), "cloud", "serve", "--port", "0", "--edge-port", "0", "--data", dataDir, "--workers", "1"],
  {
    env: { ...process.env, SVC_HOME: tmp, SVC_DATABASE_URL: "" },
    stdio: ["ignore", "pipe", "inherit"],
  },
);
children.push(cloudProcess);
const cloud = JSON.parse(await new Promise<string>((resolve) => createInterface({ input: cloudProcess.stdout! }).once("line", resolve))) as {
  cloudUrl: string;
  edgeUrl: string;
};
const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "vllm-lora" });
const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });

let jobId = "";
await check("train svc-tiny (4 steps, checkpoint at 2)", async () => {
  const train = await client.uploadDataset("train.jsonl", readFileSync(path.join(root, "examples/quickstart/data/train.jsonl"), "utf8"));
  const job = await client.createJob({
    name: "vllm-lora",
    datasetId: train.id,
    config: {
      model: "svc-tiny",
      maxSteps: 4,
      learningRate: 3e-3,
      batchSize: 2,
      saveSteps: 2,
      seed: 7,
      lora: { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj"] },
    },
  });
  for await (const _event of client.jobEvents(job.id));
  const ended = await client.getJob(job.id);
  assert(ended.status === "completed", `job ${ended.status}: ${ended.error}`);
  jobId = job.id;
  return `job ${job.id}`;
});

const hfDir = path.join(tmp, "svc-tiny-hf");
await check("svc-tiny as a Hugging Face folder", async () => {
  const script = `
import sys, transformers
src, out = sys.argv[1], sys.argv[2]
m = transformers.AutoModelForCausalLM.from_pretrained(src, gguf_file="svc-tiny.gguf")
tok = transformers.AutoTokenizer.from_pretrained(src, gguf_file="svc-tiny.gguf")
cfg = m.config
del cfg.quantization_config
plain = transformers.AutoModelForCausalLM.from_config(cfg)
plain.load_state_dict(m.state_dict())
plain.save_pretrained(out)
tok.save_pretrained(out)
`;
  execFileSync(python, ["-c", script, path.join(root, "models"), hfDir], { stdio: ["ignore", "ignore", "inherit"] });
  return hfDir;
});

const port = await freePort();
const vllmUrl = `http://127.0.0.1:${port}/v1`;
await check(`vLLM ${vllmVersion} with runtime LoRA`, async () => {
  const vllm = spawn(
    python,
    ["-m", "vllm.entrypoints.openai.api_server", "--model", hfDir, "--served-model-name", "svc-tiny-hf", "--port", String(port), "--host", "127.0.0.1"].concat([
      "--enable-lora",
      "--max-lora-rank",
      "8",
      "--max-loras",
      "2",
      "--max-model-len",
      "160",
      "--gpu-memory-utilization",
      "0.3",
      "--enforce-eager",
    ]),
    { env: { ...process.env, VLLM_ALLOW_RUNTIME_LORA_UPDATING: "True" }, stdio: ["ignore", "inherit", "inherit"] },
  );
  children.push(vllm);
  const exited = new Promise<void>((resolve) => vllm.once("exit", () => resolve()));
  const ready = until("vLLM /v1/models", 420, async () => ((await fetch(`${vllmUrl}/models`)).ok ? true : undefined));
  await Promise.race([ready, exited.then(() => Promise.reject(new Error("vLLM exited before it served")))]);
  return vllmUrl;
});

const loraDir = path.join(tmp, "shared-lora");
const vllmModels = async () => ((await (await fetch(`${vllmUrl}/models`)).json()) as { data: { id: string }[] }).data.map((m) => m.id);
const chat = async (slug: string) => {
  const res = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "x", messages: [{ role: "user", content: "What color is milk?" }], max_tokens: 16, temperature: 0 }),
  });
  const body = (await res.json()) as any;
  assert(res.status === 200, `chat HTTP ${res.status}: ${JSON.stringify(body)}`);
  return String(body.choices[0].message.content);
};

let deploymentId = "";
await check("deploy: adapter loaded", async () => {
  const workerToken = readFileSync(path.join(dataDir, "worker-token"), "utf8").trim();
  const registered = await fetch(`${cloud.cloudUrl}/v1/models`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${workerToken}` },
    body: JSON.stringify({ name: "vllm-gpu", upstreamUrl: vllmUrl, loraDir }),
  });
  assert(registered.status === 201, `register: HTTP ${registered.status} ${await registered.text()}`);
  const deployment = await client.createDeployment({ slug: "on-vllm", target: { kind: "adapter", jobId, baseModel: "vllm-gpu" }, authMode: "none" });
  deploymentId = deployment.id;
  const served = (await client.getDeployment(deployment.id)).servedOn;
  const adapter = served?.engine === "upstream" ? served.adapter : undefined;
  assert(adapter?.state === "loaded", JSON.stringify(served));
  assert((await vllmModels()).includes(`svc-${jobId}`), `vLLM lists ${await vllmModels()}`);
  return `${adapter?.name} from ${adapter?.path}`;
});
await check("chat routed by name", async () => JSON.stringify(await chat("on-vllm")));
await check("retarget: old unloaded, new loaded", async () => {
  await client.updateDeployment(deploymentId, { target: { kind: "checkpoint", jobId, step: 2, baseModel: "vllm-gpu" } });
  const models = await vllmModels();
  assert(models.includes(`svc-${jobId}-step-2`) && !models.includes(`svc-${jobId}`), `vLLM lists ${models}`);
  return JSON.stringify(await chat("on-vllm"));
});
await check("vLLM forgets it: reloaded by the next chat", async () => {
  const unloaded = await fetch(`${vllmUrl}/unload_lora_adapter`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ lora_name: `svc-${jobId}-step-2` }),
  });
  assert(unloaded.ok, `unload: HTTP ${unloaded.status}`);
  const answer = await chat("on-vllm");
  assert((await vllmModels()).includes(`svc-${jobId}-step-2`), "not loaded again");
  return JSON.stringify(answer);
});
await check("delete: unloaded", async () => {
  await client.deleteDeployment(deploymentId);
  const models = await vllmModels();
  assert(!models.some((m) => m.startsWith(`svc-${jobId}`)), `vLLM lists ${models}`);
  return models.join(", ");
});
finish({ vllmVersion });
