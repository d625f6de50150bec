/**
 * `svc export` (issue 27) after a real training run (a copy of examples/quickstart, 4 steps, a
 * checkpoint every 2): the real CLI against a real cloud. A merged GGUF in Q8_0 and F16 holding the
 * base's tensors and no adapter; LM Studio's folder layout; an Ollama folder whose Modelfile names
 * the base and adapter files beside it, and `ollama create` run in it (by a stand-in `ollama` on PATH
 * that records its arguments: Ollama is not installed here); PEFT as the adapter download gives it.
 * The studio's download of a merged model runs the same command, and so do its Ollama and LM Studio
 * exports, sent zipped. Bad input says what is wrong and leaves nothing behind.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readGgufHeader } from "../../engine/gguf/reader.js";
import { fileNameOf } from "../../sdk/api/files.js";
import type { CloudClient } from "../../sdk/client.js";
import { mergedSizeEstimate } from "../../ui-shared/adapterFiles.js";
import { pollUntil } from "../support/poll.js";
import type { Job } from "../../sdk/wire.js";
import { projectClient, startStudioStack, trainThroughStudio, type StudioStack } from "../support/studioStack.js";
import { cliPath } from "../support/cloud.js";

const BASE = fileURLToPath(new URL("../../models/svc-tiny.gguf", import.meta.url));

describe("svc export", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let client: CloudClient;
  let job: Job;
  let stem: string;

  before(async () => {
    stack = await startStudioStack({ workers: 1, maxSteps: 4, saveSteps: 2, evalSteps: 2 });
    job = await trainThroughStudio(stack.studio);
    client = projectClient(stack);
    stem = `quickstart-json-answers-${job.id.slice(0, 8)}`;
  });
  after(async () => {
    await stack?.stop();
  });

  const svc = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cliPath, "export", ...args], { encoding: "utf8", cwd: stack.projectDir, env: { ...process.env, ...env } });
  const folder = (name: string) => {
    const dir = path.join(stack.tmp.path, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const onDisk = (name: string) => readFileSync(path.join(stack.cloud.dataDir, "artifacts", job.id, name));

  for (const [quant, fileType, tensorType] of [
    ["q8_0", 7, 8],
    ["f16", 1, 1],
  ] as const) {
    it(`gguf-merged ${quant}: one GGUF with the base's tensors, its matrices in ${quant}, no adapter tensors, nothing else left`, async () => {
      const dir = folder(`merged-${quant}`);
      const out = path.join(dir, "model.gguf");
      const result = svc([job.id, "--format", "gguf-merged", "--quant", quant, "--out", out]);
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\(`));
      assert.match(result.stderr, /merged: 100% of \d+ tensors/);
      assert.deepEqual(readdirSync(dir), ["model.gguf"], "no temporary files left beside it");
      const [merged, base] = [await readGgufHeader(out), await readGgufHeader(BASE)];
      assert.deepEqual(
        merged.tensors.map((t) => [t.name, t.dims]),
        base.tensors.map((t) => [t.name, t.dims]),
      );
      assert.equal(merged.metadata.get("general.file_type")?.value, fileType);
      assert.equal(merged.tensors.find((t) => t.name === "blk.0.attn_q.weight")?.type, tensorType);
      assert.equal(merged.metadata.get("general.name")?.value, stem);
    });
  }

  it("gguf-merged defaults: Q8_0 into the current folder, named after the job", async () => {
    const result = svc([job.id, "--format", "gguf-merged", "--checkpoint", "2"]);
    assert.equal(result.status, 0, result.stderr);
    assert.ok(existsSync(path.join(stack.projectDir, `${stem}-step-2-q8_0.gguf`)), result.stdout);
  });

  it("lmstudio: the merged GGUF at <models>/svc/<job>/<file>.gguf", async () => {
    const models = folder("lmstudio-models");
    const result = svc([job.id, "--format", "lmstudio", "--quant", "f16", "--out", models]);
    assert.equal(result.status, 0, result.stderr);
    const file = path.join(models, "svc", stem, `${stem}-f16.gguf`);
    assert.deepEqual(readdirSync(path.join(models, "svc", stem)), [`${stem}-f16.gguf`]);
    assert.equal((await readGgufHeader(file)).metadata.get("general.file_type")?.value, 1);
  });

  it("ollama: a Modelfile beside the base and the adapter, and ollama create run in that folder (a stand-in ollama)", async () => {
    const bin = folder("stand-in-bin");
    const record = path.join(bin, "calls.jsonl");
    // A stand-in for Ollama's CLI: records its arguments and folder, as the real one would read them.
    writeFileSync(path.join(bin, "ollama"), `#!/bin/sh\nprintf '{"args":"%s","cwd":"%s"}\\n' "$*" "$PWD" >> ${JSON.stringify(record)}\n`);
    chmodSync(path.join(bin, "ollama"), 0o755);
    const out = path.join(folder("ollama-parent"), "export");
    const result = svc([job.id, "--format", "ollama", "--checkpoint", "4", "--out", out], { PATH: `${bin}${path.delimiter}${process.env.PATH}` });
    assert.equal(result.status, 0, result.stderr);
    const lora = `${stem}-step-4-lora.gguf`;
    assert.deepEqual(readdirSync(out).sort(), ["Modelfile", lora, "svc-tiny.gguf"].sort());
    assert.ok(readFileSync(path.join(out, "svc-tiny.gguf")).equals(readFileSync(BASE)), "FROM: the base model's bytes");
    assert.ok(readFileSync(path.join(out, lora)).equals(onDisk("checkpoint-4.gguf")), "ADAPTER: the checkpoint's bytes");
    const modelfile = readFileSync(path.join(out, "Modelfile"), "utf8");
    assert.match(modelfile, /^FROM \.\/svc-tiny\.gguf$/m);
    assert.match(modelfile, new RegExp(`^ADAPTER \\./${lora.replace(/\./g, "\\.")}$`, "m"));
    assert.match(modelfile, /^TEMPLATE """\{\{- range \.Messages \}\}<\|\{\{ \.Role \}\}\|>\{\{ \.Content \}\}<\|end\|>\{\{ end \}\}<\|assistant\|>"""$/m);
    assert.match(modelfile, /^PARAMETER stop "<\|end\|>"$/m);
    const calls = readFileSync(record, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(calls, [{ args: `create ${stem.toLowerCase()} -f Modelfile`, cwd: out }]);
    assert.deepEqual(readdirSync(path.dirname(out)), ["export"], "no temporary folder left");
  });

  it("ollama without ollama on PATH: the files, and the command to run", async () => {
    const out = path.join(folder("ollama-no-bin"), "export");
    const result = svc([job.id, "--format", "ollama", "--out", out], { PATH: path.dirname(process.execPath) });
    assert.equal(result.status, 0, result.stderr);
    assert.ok(existsSync(path.join(out, "Modelfile")));
    assert.match(result.stderr, new RegExp(`ollama is not on PATH: to add the model later, run  ollama create ${stem.toLowerCase()} -f Modelfile`));
  });

  it("peft: the zip the adapter download gives", async () => {
    const out = path.join(folder("peft"), "adapter.zip");
    const result = svc([job.id, "--format", "peft", "--out", out]);
    assert.equal(result.status, 0, result.stderr);
    const download = Buffer.from(await (await client.openJobAdapter(job.id, { format: "peft" })).arrayBuffer());
    assert.ok(readFileSync(out).equals(download));
  });

  it("studio: GET /api/jobs/:id/merged-model runs svc export and sends the merged GGUF, leaving no temporary folder", async () => {
    const tempFolders = () => readdirSync(os.tmpdir()).filter((name) => name.startsWith("svc-studio-export-"));
    const before = tempFolders();
    const get = (query: string) =>
      fetch(`http://127.0.0.1:${stack.studio.port}/api/jobs/${job.id}/merged-model?${query}`, { headers: { "x-svc-studio-token": stack.studio.token } });
    const response = await get("quant=f16&step=2");
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(fileNameOf(response.headers.get("content-disposition")), `${stem}-step-2-f16.gguf`);
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.equal(Number(response.headers.get("content-length")), bytes.length);
    const file = path.join(folder("studio"), "merged.gguf");
    writeFileSync(file, bytes);
    const header = await readGgufHeader(file);
    assert.equal(header.metadata.get("general.file_type")?.value, 1);
    // The size the job page shows before the export is about the size written.
    const [model] = (await client.listModels()).filter((m) => m.name === "svc-tiny");
    const estimate = mergedSizeEstimate(model.parameters, "f16")!;
    assert.ok(Math.abs(estimate - bytes.length) / bytes.length < 0.2, `estimate ${estimate} for ${bytes.length} bytes`);

    // The Final adapter row (no step) exports the final adapter, even where a checkpoint scored better.
    const final = await get("quant=q8_0");
    assert.equal(final.status, 200, await final.clone().text());
    assert.doesNotMatch(fileNameOf(final.headers.get("content-disposition")) ?? "", /step-/);
    await final.body?.cancel();

    const badQuant = await get("quant=q5_0");
    assert.equal(badQuant.status, 400);
    assert.match((await badQuant.json()).error.message, /quant must be "q8_0", "f16" or "q4_k_m"/);
    const noCheckpoint = await get("quant=q8_0&step=3");
    assert.equal(noCheckpoint.status, 404);
    assert.match((await noCheckpoint.json()).error.message, /has no checkpoint at step 3/);
    await pollUntil(async () => (tempFolders().length === before.length ? true : undefined), {
      timeoutMs: 10_000,
      description: "the studio's temporary export folders to be removed",
    });
  });

  const studioGet = (route: string) => fetch(`http://127.0.0.1:${stack.studio.port}${route}`, { headers: { "x-svc-studio-token": stack.studio.token } });
  /** A studio export saved and unzipped: its name, its entries, and the folder they went to. */
  async function studioZip(query: string, name: string) {
    const response = await studioGet(`/api/jobs/${job.id}/merged-model?${query}`);
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get("content-type"), "application/zip");
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.equal(Number(response.headers.get("content-length")), bytes.length);
    const dir = folder(name);
    const zip = path.join(dir, "export.zip");
    writeFileSync(zip, bytes);
    const entries = spawnSync("unzip", ["-Z1", zip], { encoding: "utf8" }).stdout.trim().split("\n").sort();
    const unzipped = path.join(dir, "unzipped");
    const unzip = spawnSync("unzip", ["-q", zip, "-d", unzipped], { encoding: "utf8" });
    assert.equal(unzip.status, 0, unzip.stderr);
    return { name: fileNameOf(response.headers.get("content-disposition")), entries, unzipped };
  }

  it("studio: format=ollama sends the CLI's Ollama folder as a zip (the Modelfile's FROM and ADAPTER inside it), with progress by exportId", async () => {
    const exportId = `test-${Date.now()}-ollama`;
    assert.equal((await studioGet(`/api/exports/${exportId}`)).status, 404, "no progress before the export starts");
    const zip = await studioZip(`format=ollama&step=2&exportId=${exportId}`, "studio-ollama");
    assert.equal(zip.name, `${stem}-step-2-ollama.zip`);
    const lora = `${stem}-step-2-lora.gguf`;
    assert.deepEqual(zip.entries, ["Modelfile", lora, "svc-tiny.gguf"].sort());
    const modelfile = readFileSync(path.join(zip.unzipped, "Modelfile"), "utf8");
    const from = /^FROM \.\/(.+)$/m.exec(modelfile)?.[1];
    const adapter = /^ADAPTER \.\/(.+)$/m.exec(modelfile)?.[1];
    assert.ok(from && readFileSync(path.join(zip.unzipped, from)).equals(readFileSync(BASE)), `FROM ${from}: the base model's bytes`);
    assert.ok(adapter && readFileSync(path.join(zip.unzipped, adapter)).equals(onDisk("checkpoint-2.gguf")), `ADAPTER ${adapter}: the checkpoint's bytes`);
    // The CLI's own Modelfile for the same checkpoint: the same template and stop lines, word for word.
    const out = path.join(folder("cli-ollama-2"), "export");
    const cli = svc([job.id, "--format", "ollama", "--checkpoint", "2", "--no-create", "--out", out]);
    assert.equal(cli.status, 0, cli.stderr);
    assert.equal(modelfile, readFileSync(path.join(out, "Modelfile"), "utf8"));
    assert.match(modelfile, /^TEMPLATE """/m);
    assert.match(modelfile, /^PARAMETER stop "<\|end\|>"$/m);

    const progress = await pollUntil(
      async () => {
        const answer = await studioGet(`/api/exports/${exportId}`);
        const body = (await answer.json()) as { stage: string; done: boolean };
        return body.done ? body : undefined;
      },
      { timeoutMs: 10_000, description: "the export's progress to say done" },
    );
    assert.equal(progress.stage, `sending ${stem}-step-2-ollama.zip`);
  });

  it("studio: format=lmstudio sends the merged GGUF under LM Studio's svc/<job>/ layout as a zip", async () => {
    const zip = await studioZip("format=lmstudio&quant=q8_0&step=2", "studio-lmstudio");
    const file = `${stem}-step-2-q8_0.gguf`;
    assert.equal(zip.name, `${stem}-step-2-q8_0-lmstudio.zip`);
    assert.deepEqual(zip.entries, [`svc/${stem}/${file}`]);
    const header = await readGgufHeader(path.join(zip.unzipped, "svc", stem, file));
    assert.equal(header.metadata.get("general.file_type")?.value, 7, "Q8_0");
    assert.equal(
      header.tensors.some((t) => t.name.includes("lora")),
      false,
      "the adapter is merged in",
    );
  });

  it("studio: a format it does not know, or a quant Ollama does not take, is a 400 saying why", async () => {
    const unknown = await studioGet(`/api/jobs/${job.id}/merged-model?format=onnx`);
    assert.equal(unknown.status, 400);
    assert.match((await unknown.json()).error.message, /format must be "gguf-merged", "ollama" or "lmstudio"/);
    const quantised = await studioGet(`/api/jobs/${job.id}/merged-model?format=ollama&quant=f16`);
    assert.equal(quantised.status, 400);
    assert.match((await quantised.json()).error.message, /--quant applies to the merged formats/);
  });

  it("q4_k_m: merges to F16 and hands that to llama-quantize (a stand-in that records its arguments and copies)", async () => {
    const bin = folder("stand-in-quantize");
    const record = path.join(bin, "args.txt");
    const quantizer = path.join(bin, "llama-quantize");
    writeFileSync(quantizer, `#!/bin/sh\necho "$@" > ${JSON.stringify(record)}\ncp "$1" "$2"\n`);
    chmodSync(quantizer, 0o755);
    const dir = folder("q4");
    const result = svc([job.id, "--format", "gguf-merged", "--quant", "q4_k_m", "--out", dir], { SVC_LLAMA_QUANTIZE: quantizer });
    assert.equal(result.status, 0, result.stderr);
    const [input, output, type] = readFileSync(record, "utf8").trim().split(" ");
    assert.equal(type, "Q4_K_M");
    assert.notEqual(input, output);
    assert.deepEqual(readdirSync(dir), [`${stem}-q4_k_m.gguf`]);
    assert.equal(
      (await readGgufHeader(path.join(dir, `${stem}-q4_k_m.gguf`))).metadata.get("general.file_type")?.value,
      1,
      "the stand-in passed the F16 merge through",
    );
  });

  it("bad input: a clear error, and nothing written", async () => {
    const dir = folder("bad");
    const out = path.join(dir, "x.gguf");
    const cases: [string[], number, RegExp][] = [
      [["job_doesnotexist", "--format", "gguf-merged", "--out", out], 1, /job_doesnotexist/],
      [[job.id, "--format", "gguf-merged", "--checkpoint", "3", "--out", out], 1, /has no checkpoint at step 3/],
      [[job.id, "--format", "gguf", "--out", out], 2, /unknown format "gguf": use gguf-merged, ollama, lmstudio, peft/],
      [[job.id, "--format", "gguf-merged", "--quant", "q5_0", "--out", out], 2, /unknown quantisation "q5_0": use q8_0, q4_k_m, f16/],
      [[job.id, "--out", out], 2, /needs --format/],
      [[job.id, "--format", "peft", "--quant", "f16", "--out", out], 2, /--quant applies to the merged formats/],
      [[job.id, "--format", "gguf-merged", "--checkpoint", "two", "--out", out], 2, /--checkpoint must be a step number/],
    ];
    for (const [args, status, message] of cases) {
      const result = svc(args);
      assert.equal(result.status, status, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(" "));
    }
    const noQuantizer = svc([job.id, "--format", "gguf-merged", "--quant", "q4_k_m", "--out", out], {
      PATH: path.dirname(process.execPath),
      SVC_LLAMA_QUANTIZE: "",
    });
    assert.equal(noQuantizer.status, 1);
    assert.match(noQuantizer.stderr, /--quant q4_k_m needs llama\.cpp's llama-quantize/);
    assert.deepEqual(readdirSync(dir), [], "nothing written, not even a temporary file");
  });
});
