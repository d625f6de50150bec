/** `svc worker --procs / --gpus / --nodes / --node-rank / --master / --fsdp` read into the ranks a job trains on. */
import { parseMaster, worldSize, type TorchRanks } from "../engine/backends/torch/ranks.js";

function count(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a whole number of at least 1, not "${value}"`);
  return n;
}

/** --procs / --gpus / --nodes (and --fsdp) as the ranks a job trains on; undefined for the usual single process. */
export function ranksFromFlags(values: {
  procs?: string;
  gpus?: string;
  nodes?: string;
  "node-rank"?: string;
  master?: string;
  fsdp?: boolean;
}): TorchRanks | undefined {
  const procs = count(values.procs, "--procs");
  const gpus = count(values.gpus, "--gpus");
  const nodes = count(values.nodes, "--nodes");
  if (procs !== undefined && gpus !== undefined) throw new Error("give --procs (CPU processes) or --gpus, not both");
  if (nodes === undefined && (values.master !== undefined || values["node-rank"] !== undefined)) throw new Error("--master and --node-rank go with --nodes");
  if (procs === undefined && gpus === undefined && nodes === undefined) {
    if (values.fsdp) throw new Error("--fsdp shards a job across ranks: give it with --procs, --gpus or --nodes");
    return undefined;
  }
  const ranks: TorchRanks = {
    perNode: gpus ?? procs ?? 1,
    backend: gpus !== undefined ? "nccl" : "gloo",
    ...(values.fsdp ? { strategy: "fsdp" as const } : {}),
  };
  if (nodes !== undefined) {
    if (!values.master) throw new Error("--nodes needs --master HOST:PORT, the address node 0 listens at");
    parseMaster(values.master);
    const rank = values["node-rank"] === undefined ? 0 : Number(values["node-rank"]);
    if (!Number.isInteger(rank) || rank < 0 || rank >= nodes) throw new Error(`--node-rank must be 0 to ${nodes - 1}, not "${values["node-rank"]}"`);
    ranks.nodes = { count: nodes, rank, master: values.master };
  }
  if (worldSize(ranks) < 2 && !ranks.nodes) {
    if (values.fsdp) throw new Error("--fsdp needs at least 2 ranks to shard across");
    return undefined;
  }
  return ranks;
}
