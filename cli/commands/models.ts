/** `svc models list|add`: the base models of the local cloud. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { CloudClient } from "../../sdk/client.js";
import { resolveCloudUrl } from "../../sdk/daemon.js";
import { defaultCloudDataDir } from "../../sdk/paths.js";
import { ProjectSession } from "../../sdk/session.js";
import type { BaseModel } from "../../sdk/wire.js";
import { type Command, parse } from "../command.js";
import { CliError } from "../output.js";

const USAGE = `svc models list
svc models add FILE.gguf --name NAME [--replace]
svc models add --upstream http://HOST:PORT/v1 --name NAME [--adapter-model NAME] [--replace]

Registers a base model with the local cloud: a GGUF file on this machine (served by llama.cpp,
deployable; training is for the svc-tiny family only), or an OpenAI-compatible upstream server.
Registering reads the cloud's worker token from its data dir (--data, default $SVC_HOME/cloud).`;

export const modelsCommand: Command = {
  name: "models",
  summary: "list or register base models",
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      { name: { type: "string" }, upstream: { type: "string" }, "adapter-model": { type: "string" }, replace: { type: "boolean" }, data: { type: "string" }, json: { type: "boolean" } },
      USAGE,
    );
    const [sub, file] = positionals;
    if (values.help || !sub) {
      process.stdout.write(USAGE + "\n");
      return sub || values.help ? 0 : 2;
    }
    if (sub === "list") {
      const session = await ProjectSession.open({ projectDir: process.cwd() });
      const models = await session.client().listModels();
      process.stdout.write(values.json ? JSON.stringify(models) + "\n" : formatModels(models));
      return 0;
    }
    if (sub !== "add") throw new CliError(`unknown subcommand "models ${sub}"\nusage: ${USAGE.split("\n")[0]}`, 2);
    if (!values.name) throw new CliError("--name is required", 2);
    if (Boolean(file) === Boolean(values.upstream)) throw new CliError("give either FILE.gguf or --upstream URL", 2);
    if (values.upstream && !/^https?:\/\/[^/]+/.test(values.upstream)) throw new CliError(`--upstream must be an http(s) URL such as http://gpu-box:8000/v1, not "${values.upstream}"`, 2);
    if (values["adapter-model"] && !values.upstream) throw new CliError("--adapter-model names the model on an --upstream server; it needs --upstream", 2);
    const dataDir = values.data ?? defaultCloudDataDir();
    let token: string;
    try {
      token = readFileSync(path.join(dataDir, "worker-token"), "utf8").trim();
    } catch {
      throw new CliError(`cannot read the cloud's worker token in ${dataDir}; is the local cloud running (svc cloud start)?`);
    }
    const client = new CloudClient({ baseUrl: await resolveCloudUrl(), token });
    const model = await client.request<BaseModel>("POST", "/v1/models", {
      body: { name: values.name, path: file ? path.resolve(file) : undefined, upstreamUrl: values.upstream, adapterModel: values["adapter-model"], replace: values.replace },
    });
    const via = values.upstream ? ` → ${values.upstream}${values["adapter-model"] ? ` as model "${values["adapter-model"]}"` : ""}` : "";
    process.stdout.write(`registered ${model.name} (${model.source}${model.trainable ? ", trainable" : ", deploy only"})${via}\n`);
    return 0;
  },
};

function formatModels(models: BaseModel[]): string {
  if (models.length === 0) return "no base models registered\n";
  return models.map((m) => `${m.name.padEnd(24)} ${m.source.padEnd(9)} ${m.trainable ? "trainable" : "deploy only"}\n`).join("");
}
