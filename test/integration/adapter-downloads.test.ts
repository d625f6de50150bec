/**
 * Adapter downloads (issue 12): `GET /v1/jobs/:id/adapter` on the cloud and `GET /api/jobs/:id/adapter` on the studio,
 * after a real training run (a copy of examples/quickstart, 4 steps, a checkpoint every 2). The bytes are the
 * artifacts on the cloud's disk; the PEFT zip is read by Info-ZIP's own unzip, and its safetensors header names
 * the LoRA tensors; another project's job is a 404 like every job route; the studio keeps its CSRF rule.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileNameOf } from "../../sdk/api/files.js";
import { CloudClient } from "../../sdk/client.js";
import { ApiError } from "../../sdk/errors.js";
import type { Job } from "../../sdk/wire.js";
import { projectClient, startStudioStack, studioRequest, trainThroughStudio, type StudioStack } from "../support/studioStack.js";

describe("adapter downloads: cloud and studio", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let client: CloudClient;
  let job: Job;

  before(async () => {
    stack = await startStudioStack({ workers: 1, maxSteps: 4, saveSteps: 2, evalSteps: 2 });
    job = await trainThroughStudio(stack.studio);
    client = projectClient(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  const onDisk = (name: string) => readFileSync(path.join(stack.cloud.dataDir, "artifacts", job.id, name));
  const bytesOf = async (response: Response) => Buffer.from(await response.arrayBuffer());

  it("GGUF: the final adapter's and a checkpoint's bytes, with their length, type and name", async () => {
    const final = await client.openJobAdapter(job.id, { format: "gguf" });
    assert.equal(final.headers.get("content-type"), "application/octet-stream");
    assert.equal(fileNameOf(final.headers.get("content-disposition")), `quickstart-json-answers-${job.id.slice(0, 8)}-adapter.gguf`);
    const finalBytes = await bytesOf(final);
    assert.equal(Number(final.headers.get("content-length")), finalBytes.length);
    assert.ok(finalBytes.equals(onDisk("adapter.gguf")), "the final adapter's bytes are the artifact on disk");
    assert.equal(finalBytes.subarray(0, 4).toString("latin1"), "GGUF");

    const checkpoint = await client.openJobAdapter(job.id, { format: "gguf", step: 2 });
    assert.equal(fileNameOf(checkpoint.headers.get("content-disposition")), `quickstart-json-answers-${job.id.slice(0, 8)}-step-2.gguf`);
    assert.ok((await bytesOf(checkpoint)).equals(onDisk("checkpoint-2.gguf")), "a checkpoint's bytes are its artifact on disk");
  });

  it("PEFT: a zip that unzip reads, holding the pair under PEFT's names, the weights naming lora_A and lora_B", async () => {
    const response = await client.openJobAdapter(job.id, { format: "peft", step: 4 });
    assert.equal(response.headers.get("content-type"), "application/zip");
    const name = fileNameOf(response.headers.get("content-disposition"))!;
    assert.equal(name, `quickstart-json-answers-${job.id.slice(0, 8)}-step-4-peft.zip`);
    const zip = await bytesOf(response);
    assert.equal(Number(response.headers.get("content-length")), zip.length, "the announced length is the archive's");
    const dir = path.join(stack.tmp.path, "peft");
    mkdirSync(dir);
    const file = path.join(dir, name);
    writeFileSync(file, zip);
    // Info-ZIP checks every entry's CRC-32 and sizes against the headers.
    assert.match(execFileSync("unzip", ["-t", file], { encoding: "utf8" }), /No errors detected/);
    assert.deepEqual(execFileSync("unzip", ["-Z1", file], { encoding: "utf8" }).trim().split("\n").sort(), [
      "adapter_config.json",
      "adapter_model.safetensors",
    ]);
    execFileSync("unzip", ["-q", file, "-d", path.join(dir, "out")]);
    const weights = readFileSync(path.join(dir, "out", "adapter_model.safetensors"));
    assert.ok(weights.equals(onDisk("checkpoint-4.adapter_model.safetensors")));
    assert.ok(readFileSync(path.join(dir, "out", "adapter_config.json")).equals(onDisk("checkpoint-4.adapter_config.json")));

    const header = JSON.parse(weights.subarray(8, 8 + Number(weights.readBigUInt64LE(0))).toString("utf8")) as Record<
      string,
      { dtype: string; shape: number[] }
    >;
    const tensors = Object.keys(header).filter((key) => key !== "__metadata__");
    assert.ok(tensors.some((t) => t.endsWith(".lora_A.weight")) && tensors.some((t) => t.endsWith(".lora_B.weight")), tensors.join(", "));
    assert.ok(
      tensors.every((t) => t.startsWith("base_model.model.model.layers.")),
      tensors[0],
    );
    const config = JSON.parse(readFileSync(path.join(dir, "out", "adapter_config.json"), "utf8")) as { peft_type: string; r: number };
    assert.equal(config.peft_type, "LORA");
    assert.equal(config.r, 8);
  });

  it("the final adapter's PEFT pair is the job's own adapter_model.safetensors", async () => {
    const dir = path.join(stack.tmp.path, "peft-final");
    mkdirSync(dir);
    const file = path.join(dir, "final.zip");
    writeFileSync(file, await bytesOf(await client.openJobAdapter(job.id, { format: "peft" })));
    execFileSync("unzip", ["-q", file, "-d", dir]);
    assert.ok(readFileSync(path.join(dir, "adapter_model.safetensors")).equals(onDisk("adapter_model.safetensors")));
  });

  it("404 outside the project, for an unknown job and for a step with no checkpoint; 400 naming a bad format", async () => {
    const stranger = new CloudClient({ baseUrl: stack.cloud.cloudUrl, token: (await CloudClient.createAnonymousToken(stack.cloud.cloudUrl)).token });
    await assert.rejects(stranger.openJobAdapter(job.id, { format: "gguf" }), (e: ApiError) => e.status === 404 && e.message === `job ${job.id} not found`);
    await assert.rejects(client.openJobAdapter("00000000-0000-4000-8000-000000000000", { format: "gguf" }), (e: ApiError) => e.status === 404);
    await assert.rejects(
      client.openJobAdapter(job.id, { format: "peft", step: 3 }),
      (e: ApiError) => e.status === 404 && e.message === `job ${job.id} has no checkpoint at step 3`,
    );
    await assert.rejects(
      client.openJobAdapter(job.id, { format: "onnx" as "gguf" }),
      (e: ApiError) => e.status === 400 && e.message === 'format must be "gguf" or "peft"',
    );
  });

  it("the studio relays the bytes, the name and the cloud's errors, and takes its token only in the header", async () => {
    const relayed = await studioRequestBytes(`/api/jobs/${job.id}/adapter?format=gguf&step=2`);
    assert.equal(relayed.status, 200);
    assert.ok(relayed.body.equals(onDisk("checkpoint-2.gguf")));
    assert.equal(relayed.headers["content-length"], String(relayed.body.length));
    assert.equal(fileNameOf(relayed.headers["content-disposition"] as string), `quickstart-json-answers-${job.id.slice(0, 8)}-step-2.gguf`);

    const peft = await studioRequestBytes(`/api/jobs/${job.id}/adapter?format=peft`);
    assert.equal(peft.status, 200);
    assert.equal(peft.headers["content-type"], "application/zip");

    const missing = await studioRequest(stack.studio, "GET", `/api/jobs/${job.id}/adapter?format=gguf&step=99`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.error.message, `job ${job.id} has no checkpoint at step 99`);
    assert.equal((await studioRequest(stack.studio, "GET", `/api/jobs/${job.id}/adapter?format=zip`)).status, 400);

    // A download is a GET a link could make: the token must still come in the header (CSRF), never the URL.
    assert.equal((await studioRequest(stack.studio, "GET", `/api/jobs/${job.id}/adapter?format=gguf`, { token: null })).status, 403);
    assert.equal(
      (await studioRequest(stack.studio, "GET", `/api/jobs/${job.id}/adapter?format=gguf&studioToken=${stack.studio.token}`, { token: null })).status,
      403,
    );
  });

  async function studioRequestBytes(pathAndQuery: string) {
    const response = await fetch(`${stack.studio.url}${pathAndQuery}`, { headers: { "x-svc-studio-token": stack.studio.token } });
    return {
      status: response.status,
      headers: Object.fromEntries([...(response.headers as unknown as Iterable<[string, string]>)]),
      body: Buffer.from(await response.arrayBuffer()),
    };
  }
});
