/** How a file answer names its file (sdk/api/files.ts), and the names and offers of adapter downloads. */
import assert from "node:assert/strict";
import { adapterArtifactNames } from "../../../sdk/api/jobs.js";
import { contentDisposition, fileNameOf } from "../../../sdk/api/files.js";
import { adapterDownloadName } from "../../../cloud/domain/adapterDownload.js";
import { adapterOffers } from "../../../ui-shared/adapterFiles.js";
import { formatBytes } from "../../../ui-shared/format.js";
import type { Artifact } from "../../../sdk/wire.js";

describe("file answers: Content-Disposition both ways", () => {
  it("round-trips plain, spaced, quoted and non-ASCII names, with an ASCII fallback", () => {
    for (const name of ["run-1a2b3c4d-adapter.gguf", "my run (2).zip", 'say "hi".gguf', "ünïcode-模型.gguf", "a;b=c'd.zip"]) {
      const header = contentDisposition(name);
      assert.match(header, /^attachment; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9!#$&+\-.^_`|~%]+$/, header);
      assert.equal(fileNameOf(header), name);
    }
    assert.equal(contentDisposition('ü"x.gguf').split(";")[1], ' filename="__x.gguf"');
  });

  it("reads the plain forms other servers send, and never a path", () => {
    assert.equal(fileNameOf('attachment; filename="plain.bin"'), "plain.bin");
    assert.equal(fileNameOf("attachment; filename=bare.bin"), "bare.bin");
    assert.equal(fileNameOf('attachment; filename="../../etc/passwd"'), "passwd");
    assert.equal(fileNameOf("attachment; filename*=UTF-8''..%2F..%2Fx.gguf"), "x.gguf");
    assert.equal(fileNameOf('attachment; filename=".."'), undefined);
    assert.equal(fileNameOf("inline"), undefined);
    assert.equal(fileNameOf(null), undefined);
  });
});

describe("adapter downloads: names and offers", () => {
  const job = { id: "1a2b3c4d-0000-4000-8000-000000000000", name: "quickstart-json-answers" };

  it("names the file after the job, its short id, which adapter and the format", () => {
    assert.equal(adapterDownloadName(job, { format: "gguf" }), "quickstart-json-answers-1a2b3c4d-adapter.gguf");
    assert.equal(adapterDownloadName(job, { format: "peft", step: 20 }), "quickstart-json-answers-1a2b3c4d-step-20-peft.zip");
    assert.equal(adapterDownloadName({ ...job, name: "Mon modèle / v2: été" }, { format: "gguf", step: 0 }), "Mon-modele-v2-ete-1a2b3c4d-step-0.gguf");
    assert.equal(adapterDownloadName({ ...job, name: "..." }, { format: "gguf" }), "job-1a2b3c4d-adapter.gguf");
  });

  it("finds the artifacts under the names the worker uploads", () => {
    assert.deepEqual(adapterArtifactNames(), { gguf: "adapter.gguf", weights: "adapter_model.safetensors", config: "adapter_config.json" });
    assert.deepEqual(adapterArtifactNames(20), {
      gguf: "checkpoint-20.gguf",
      weights: "checkpoint-20.adapter_model.safetensors",
      config: "checkpoint-20.adapter_config.json",
    });
  });

  it("offers the final adapter first, then the checkpoints before it latest first, PEFT only where its files exist", () => {
    let n = 0;
    const artifact = (kind: Artifact["kind"], step: number, name: string, sizeBytes: number): Artifact => ({
      id: String(n++),
      jobId: job.id,
      kind,
      step,
      name,
      sizeBytes,
      createdAt: "",
    });
    const artifacts = [
      artifact("checkpoint", 20, "checkpoint-20.gguf", 1000),
      artifact("checkpoint", 40, "checkpoint-40.gguf", 1000),
      artifact("file", 40, "checkpoint-40.adapter_config.json", 10),
      artifact("file", 40, "checkpoint-40.adapter_model.safetensors", 900),
      // Saved at the last step: the final adapter's weights, offered once (as the final adapter), not twice.
      artifact("checkpoint", 60, "checkpoint-60.gguf", 1100),
      artifact("adapter", 60, "adapter.gguf", 1100),
      artifact("file", 60, "adapter_config.json", 11),
      artifact("file", 60, "adapter_model.safetensors", 950),
    ];
    assert.deepEqual(adapterOffers(artifacts), [
      { label: "Final adapter (step 60)", ggufBytes: 1100, peftBytes: 961 },
      { step: 40, label: "Checkpoint, step 40", ggufBytes: 1000, peftBytes: 910 },
      { step: 20, label: "Checkpoint, step 20", ggufBytes: 1000, peftBytes: null },
    ]);
    assert.deepEqual(adapterOffers([]), []);
  });

  it("formats sizes in powers of 1024", () => {
    assert.equal(formatBytes(0), "0 B");
    assert.equal(formatBytes(1023), "1023 B");
    assert.equal(formatBytes(1024), "1 KB");
    assert.equal(formatBytes(14_540), "14.2 KB");
    assert.equal(formatBytes(3.4 * 1024 * 1024), "3.4 MB");
    assert.equal(formatBytes(512 * 1024 * 1024), "512 MB");
    assert.equal(formatBytes(1.25 * 1024 ** 3), "1.25 GB");
  });
});
