import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import path from "node:path";
import { PayloadTooLargeError } from "../../sdk/errors.js";
import { postWholeBody } from "../support/rawHttp.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { http, newAccount, type Account } from "../support/api.js";
import { withStore } from "../support/store.js";

const example = JSON.stringify({
  messages: [
    { role: "user", content: "hi" },
    { role: "assistant", content: "hello" },
  ],
});

describe("cloud API: datasets", () => {
  let cloud: TestCloud;
  let alice: Account;
  before(async () => {
    cloud = await startTestCloud({ env: { SVC_MAX_DATASET_BYTES: "4096" } });
    alice = await newAccount(cloud);
  });
  after(async () => cloud.dispose());

  const datasetFiles = () => {
    try {
      return readdirSync(path.join(cloud.dataDir, "datasets"));
    } catch {
      return [];
    }
  };

  it("stores a valid JSONL upload and counts its examples", async () => {
    const dataset = await alice.client.uploadDataset("train.jsonl", `${example}\n${example}\n`);
    assert.equal(dataset.name, "train.jsonl");
    assert.equal(dataset.lineCount, 2);
    assert.equal(dataset.sizeBytes, Buffer.byteLength(`${example}\n${example}\n`));
    assert.ok(datasetFiles().includes(`${dataset.id}.jsonl`));
  });

  it("stores the same content once per project: a second upload answers with the first dataset", async () => {
    const content = `${example}\n${JSON.stringify({
      messages: [
        { role: "user", content: "dedup" },
        { role: "assistant", content: "once" },
      ],
    })}\n`;
    const filesBefore = datasetFiles().length;
    const first = await alice.client.uploadDataset("first.jsonl", content);
    // Concurrent and later uploads of the same bytes, under other names, all get the first dataset.
    const again = await Promise.all([alice.client.uploadDataset("again.jsonl", content), alice.client.uploadDataset("again2.jsonl", content)]);
    const later = await alice.client.uploadDataset("later.jsonl", Buffer.from(content));
    for (const dataset of [...again, later]) assert.deepEqual(dataset, first);
    assert.equal(datasetFiles().length, filesBefore + 1);
    const rows = await withStore(cloud, (db) =>
      db
        .selectFrom("datasets")
        .select("id")
        .where("project_id", "=", alice.projectId)
        .where("name", "in", ["first.jsonl", "again.jsonl", "again2.jsonl", "later.jsonl"])
        .execute(),
    );
    assert.equal(rows.length, 1);

    // Other bytes are another dataset; the same bytes in another project are that project's own.
    const other = await alice.client.uploadDataset("first.jsonl", `${content}${example}\n`);
    assert.notEqual(other.id, first.id);
    const bob = await newAccount(cloud);
    const bobs = await bob.client.uploadDataset("first.jsonl", content);
    assert.notEqual(bobs.id, first.id);
    assert.equal(bobs.projectId, bob.projectId);
    assert.equal(datasetFiles().length, filesBefore + 3);
  });

  it("rejects invalid lines with 400 naming the line numbers, and writes nothing", async () => {
    const before = datasetFiles().length;
    const res = await http(cloud, "POST", `/v1/datasets?projectId=${alice.projectId}&name=bad.jsonl`, {
      token: alice.token,
      raw: `${example}\n{oops\n${JSON.stringify({ messages: [{ role: "user", content: "x" }] })}\n`,
      headers: { "content-type": "application/jsonl" },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, "invalid_dataset");
    assert.match(res.body.error.message, /line 2: not valid JSON/);
    assert.match(res.body.error.message, /line 3: messages must contain an assistant message/);
    assert.equal(datasetFiles().length, before);
  });

  it("rejects an empty dataset", async () => {
    const res = await http(cloud, "POST", `/v1/datasets?projectId=${alice.projectId}`, {
      token: alice.token,
      raw: "\n",
      headers: { "content-type": "application/jsonl" },
    });
    assert.equal(res.status, 400);
    assert.match(res.body.error.message, /dataset is empty/);
  });

  it("answers 413 for a dataset over the size limit", async () => {
    await assert.rejects(alice.client.uploadDataset("big.jsonl", `${example}\n`.repeat(100)), (err: unknown) => {
      assert.ok(err instanceof PayloadTooLargeError);
      assert.equal(err.status, 413);
      return true;
    });
  });

  it("a client still sending an oversized upload reads the 413 instead of a broken connection", async () => {
    const body = Buffer.from(`${example}\n`.repeat(Math.ceil((8 << 20) / example.length)));
    const response = await postWholeBody(cloud.cloudUrl, `/v1/datasets?projectId=${alice.projectId}&name=big.jsonl`, body, {
      authorization: `Bearer ${alice.token}`,
      "content-type": "application/jsonl",
    });
    assert.equal(response.status, 413);
    assert.equal(JSON.parse(response.body).error.code, "payload_too_large");
  });

  it("needs a token and a project the caller belongs to", async () => {
    const bob = await newAccount(cloud);
    const anon = await http(cloud, "POST", `/v1/datasets?projectId=${alice.projectId}`, { raw: example, headers: { "content-type": "application/jsonl" } });
    assert.equal(anon.status, 401);
    const foreign = await http(cloud, "POST", `/v1/datasets?projectId=${alice.projectId}`, {
      token: bob.token,
      raw: example,
      headers: { "content-type": "application/jsonl" },
    });
    assert.equal(foreign.status, 403);
  });
});
