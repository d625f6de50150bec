/**
 * `svc models add FILE.gguf | DISCOVERED-NAME | --upstream URL`: registers a base model with the
 * local cloud, which reads the GGUF's header (architecture, size, quantization, context, whether
 * svc can train it) and refuses a file that is not a readable GGUF.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { CloudClient } from "../../sdk/client.js";
import { resolveCloudUrl } from "../../sdk/daemon.js";
import { modelFactParts, trainingLabel } from "../../sdk/modelFacts.js";
import { defaultCloudDataDir } from "../../sdk/paths.js";
import type { BaseModel } from "../../sdk/wire.js";
import { discoverModels } from "../discover.js";
import { ggufForHfFolder, hfCacheSnapshot, isDirectory } from "../hfModels.js";
import { CliError } from "../output.js";

export interface AddModelOptions {
  /** A GGUF path or a name `svc models discover` lists. */
  target?: string;
  name?: string;
  upstream?: string;
  adapterModel?: string;
  /** A folder the cloud and a vLLM upstream share, for adapters loaded at run time. */
  loraDir?: string;
  loraDirOnServer?: string;
  replace?: boolean;
  dataDir?: string;
}

export async function addModelCommand(options: AddModelOptions): Promise<number> {
  if (Boolean(options.target) === Boolean(options.upstream))
    throw new CliError("give either FILE.gguf (or a name from svc models discover) or --upstream URL", 2);
  if (options.upstream && !/^https?:\/\/[^/]+/.test(options.upstream))
    throw new CliError(`--upstream must be an http(s) URL such as http://gpu-box:8000/v1, not "${options.upstream}"`, 2);
  if (options.adapterModel && !options.upstream) throw new CliError("--adapter-model names the model on an --upstream server; it needs --upstream", 2);
  if (options.loraDir && !options.upstream) throw new CliError("--lora-dir is a folder a vLLM --upstream server reads; it needs --upstream", 2);
  if (options.loraDirOnServer && !options.loraDir) throw new CliError("--lora-dir-on-server needs --lora-dir", 2);
  if (options.upstream && !options.name) throw new CliError("--name is required with --upstream", 2);
  const dataDir = options.dataDir ?? defaultCloudDataDir();
  const file = options.target ? await resolveTarget(options.target, options, dataDir) : undefined;
  const client = new CloudClient({ baseUrl: await resolveCloudUrl(), token: readWorkerToken(dataDir) });
  // Without --name the cloud names a file after its general.name; a discovered one keeps its listed name.
  const model = await client.registerModel({
    name: options.name ?? file?.name,
    path: file?.path,
    hfFolder: file?.hfFolder,
    upstreamUrl: options.upstream,
    adapterModel: options.adapterModel,
    loraDir: options.loraDir && path.resolve(options.loraDir),
    loraDirOnServer: options.loraDirOnServer,
    replace: options.replace,
  });
  process.stdout.write(registeredLine(model, options) + "\n");
  return 0;
}

export function registeredLine(model: BaseModel, options: Pick<AddModelOptions, "upstream" | "adapterModel"> = {}): string {
  const via = options.upstream ? ` → ${options.upstream}${options.adapterModel ? ` as model "${options.adapterModel}"` : ""}` : "";
  const facts = [...modelFactParts(model), trainingLabel(model)].join(" · ");
  const reason = model.trainable || model.source === "upstream" ? "" : `\n  not trainable: ${model.notTrainableReason}`;
  const lora = model.loraDir
    ? `\n  adapters go to ${model.loraDir.cloud}${model.loraDir.server === model.loraDir.cloud ? "" : ` (${model.loraDir.server} on the server)`}` +
      " and load at run time: start vLLM with VLLM_ALLOW_RUNTIME_LORA_UPDATING=True and --enable-lora"
    : "";
  return `registered ${model.name}: ${facts}${via}${reason}${lora}`;
}

/**
 * A GGUF file is registered as it is; a Hugging Face folder, or a repo id in the Hugging Face
 * cache, is converted to a GGUF first and registered with the folder it came from (the torch
 * backend trains from its safetensors); otherwise the word must be a name that discovery lists.
 */
async function resolveTarget(target: string, options: AddModelOptions, dataDir: string): Promise<{ path: string; name?: string; hfFolder?: string }> {
  const snapshot = isDirectory(target) ? path.resolve(target) : await hfCacheSnapshot(target);
  if (snapshot) {
    const name = options.name ?? (isDirectory(target) ? path.basename(path.resolve(target)) : target.split("/")[1]);
    return { path: await ggufForHfFolder(snapshot, name, dataDir, Boolean(options.replace)), name, hfFolder: snapshot };
  }
  if (existsSync(target)) return { path: path.resolve(target) };
  if (/\.gguf$/i.test(target)) throw new CliError(`no such file: ${path.resolve(target)}`);
  if (/[\\/]/.test(target) && !/^[\w.-]+\/[\w.-]+$/.test(target)) throw new CliError(`no such file or folder: ${path.resolve(target)}`);
  const { models } = await discoverModels();
  const found = models.find((m) => m.name === target) ?? models.find((m) => m.name.toLowerCase() === target.toLowerCase());
  if (found && isDirectory(found.path)) {
    const folder = path.resolve(found.path);
    return {
      path: await ggufForHfFolder(folder, options.name ?? found.name, dataDir, Boolean(options.replace)),
      name: options.name ?? found.name,
      hfFolder: folder,
    };
  }
  if (found) return { path: found.path, name: found.name };
  const known = models.map((m) => m.name);
  throw new CliError(
    `"${target}" is neither a file nor a model that svc models discover lists` +
      (known.length ? ` (it lists: ${known.join(", ")})` : " (it lists none: no GGUF files in LM Studio, the Hugging Face cache, Ollama or SVC_MODEL_PATHS)"),
  );
}

/** Registering names files on the cloud's machine, so it takes the worker token only the data dir's owner can read. */
function readWorkerToken(dataDir: string): string {
  try {
    return readFileSync(path.join(dataDir, "worker-token"), "utf8").trim();
  } catch {
    throw new CliError(`cannot read the cloud's worker token in ${dataDir}; is the local cloud running (svc cloud start)?`);
  }
}
