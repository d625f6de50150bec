/** `svc worker` flags for one job on several ranks (issue 29), and torchrun's arguments from them. */
import assert from "node:assert/strict";
import { rankFailure, ranksEnv, torchrunArgs } from "../../../engine/backends/torch/ranks.js";
import { ranksFromFlags } from "../../../cli/rankFlags.js";

describe("svc worker rank flags", () => {
  it("--procs and --gpus: ranks on this machine; one of them alone is the usual single process", () => {
    assert.deepEqual(ranksFromFlags({ procs: "2" }), { perNode: 2, backend: "gloo" });
    assert.deepEqual(ranksFromFlags({ gpus: "4" }), { perNode: 4, backend: "nccl" });
    assert.equal(ranksFromFlags({ procs: "1" }), undefined);
    assert.equal(ranksFromFlags({}), undefined);
    assert.deepEqual(torchrunArgs({ perNode: 2, backend: "gloo" }), ["--standalone", "--nproc-per-node=2", "--max-restarts=0"]);
  });

  it("--fsdp: the ranks shard the base (FSDP), which needs two ranks or more", () => {
    assert.deepEqual(ranksFromFlags({ procs: "2", fsdp: true }), { perNode: 2, backend: "gloo", strategy: "fsdp" });
    assert.deepEqual(ranksFromFlags({ gpus: "8", fsdp: true }), { perNode: 8, backend: "nccl", strategy: "fsdp" });
    assert.equal(ranksEnv({ perNode: 2, backend: "gloo", strategy: "fsdp" }).SVC_TORCH_STRATEGY, "fsdp");
    assert.equal(ranksEnv({ perNode: 2, backend: "gloo" }).SVC_TORCH_STRATEGY, "ddp");
    assert.throws(() => ranksFromFlags({ fsdp: true }), /--fsdp shards a job across ranks: give it with --procs, --gpus or --nodes/);
    assert.throws(() => ranksFromFlags({ procs: "1", fsdp: true }), /--fsdp needs at least 2 ranks/);
  });

  it("--nodes: node 0's address and this node's rank reach torchrun", () => {
    const ranks = ranksFromFlags({ nodes: "2", "node-rank": "1", master: "10.0.0.1:29500", gpus: "8" });
    assert.deepEqual(ranks, { perNode: 8, backend: "nccl", nodes: { count: 2, rank: 1, master: "10.0.0.1:29500" } });
    assert.deepEqual(torchrunArgs(ranks!), [
      "--nnodes=2",
      "--node-rank=1",
      "--master-addr=10.0.0.1",
      "--master-port=29500",
      "--nproc-per-node=8",
      "--max-restarts=0",
    ]);
    assert.equal(ranksFromFlags({ nodes: "2", master: "[fd00::1]:7000" })!.nodes!.rank, 0);
  });

  it("refuses what cannot run, naming the flag", () => {
    assert.throws(() => ranksFromFlags({ procs: "2", gpus: "2" }), /--procs \(CPU processes\) or --gpus, not both/);
    assert.throws(() => ranksFromFlags({ procs: "0" }), /--procs must be a whole number of at least 1, not "0"/);
    assert.throws(() => ranksFromFlags({ nodes: "2" }), /--nodes needs --master HOST:PORT/);
    assert.throws(() => ranksFromFlags({ nodes: "2", master: "host" }), /--master must be host:port/);
    assert.throws(() => ranksFromFlags({ nodes: "2", master: "h:1", "node-rank": "2" }), /--node-rank must be 0 to 1, not "2"/);
    assert.throws(() => ranksFromFlags({ master: "h:1" }), /--master and --node-rank go with --nodes/);
  });

  it("torchrun's report of the first failed rank reads as one sentence", () => {
    const report =
      "Root Cause (first observed failure):\n[0]:\n  time      : 2026-11-27_15:06:08\n  host      : localhost\n  rank      : 3 (local_rank: 1)\n  exitcode  : 1 (pid: 322)\n  error_file: <N/A>\n  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html\n";
    assert.equal(rankFailure(report, 4), "rank 3 of 4 failed (exit code 1); torchrun stopped the other ranks");
    assert.equal(rankFailure("Traceback (most recent call last):\nValueError: x", 2), undefined);
  });

  it("names the rank a signal killed, though torchrun first observed its peer failing in a collective", () => {
    const entry = (rank: number, exitcode: string, traceback: string) =>
      `[${rank}]:\n  time      : 2026-11-27_20:08:32\n  host      : localhost\n  rank      : ${rank} (local_rank: ${rank})\n  exitcode  : ${exitcode}\n  error_file: <N/A>\n  traceback : ${traceback}\n`;
    const divider = "------------------------------------------------------------\n";
    const report = `svc_torch_server.py FAILED\n${divider}Failures:\n${entry(1, "-9 (pid: 1941)", "Signal 9 (SIGKILL) received by PID 1941")}${divider}Root Cause (first observed failure):\n${entry(0, "1 (pid: 1940) ", "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")}`;
    assert.equal(rankFailure(report, 2), "rank 1 of 2 failed (Signal 9 (SIGKILL) received by PID 1941); torchrun stopped the other ranks");
    const noOthers = `Failures:\n  <NO_OTHER_FAILURES>\n${divider}Root Cause (first observed failure):\n${entry(0, "1 (pid: 1940)", "To enable traceback see: x")}`;
    assert.equal(rankFailure(noOthers, 2), "rank 0 of 2 failed (exit code 1); torchrun stopped the other ranks");
  });
});
