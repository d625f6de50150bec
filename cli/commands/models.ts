/** `svc models list|discover|add`: the base models of the local cloud and the GGUF files on this machine. */
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";
import { addModelCommand } from "./models-add.js";
import { discoverModelsCommand } from "./models-discover.js";
import { listModelsCommand } from "./models-list.js";

const USAGE = `svc models list [--json]
svc models discover [--json]
svc models add FILE.gguf [--name NAME] [--replace]
svc models add HF-FOLDER | ORG/NAME [--name NAME] [--replace]
svc models add DISCOVERED-NAME [--name NAME] [--replace]
svc models add --upstream http://HOST:PORT/v1 --name NAME [--adapter-model NAME] [--replace]
svc models add --upstream http://HOST:PORT/v1 --name NAME --lora-dir DIR [--lora-dir-on-server DIR]

list      the registered base models: architecture, parameters, quantization, context, and
          whether svc can train them (llama, qwen2 and qwen3 GGUFs) or only serve them.
discover  GGUF files in LM Studio's models folder, the Hugging Face cache ($HF_HUB_CACHE,
          $HF_HOME; its safetensors checkpoints too), Ollama's models ($OLLAMA_MODELS) and the
          folders in $SVC_MODEL_PATHS, with the name \`svc models add\` takes for each.
add       registers a GGUF file on this machine (named after its general.name unless --name),
          a Hugging Face checkpoint (a folder with config.json, *.safetensors and a tokenizer, or
          ORG/NAME in the Hugging Face cache: converted once to a GGUF in the data dir by
          llama.cpp's converter, with the torch backend's Python; --replace converts again),
          a discovered model by its listed name, or an OpenAI-compatible upstream server.
          --lora-dir: the upstream is a vLLM server started with
          VLLM_ALLOW_RUNTIME_LORA_UPDATING=True that reads DIR too (a shared folder; mounted
          at --lora-dir-on-server there): an endpoint on a job's adapter with this model as its
          base gets the adapter's PEFT files written to DIR and loaded into vLLM by name.
          Registering reads the cloud's worker token from its data dir (--data, default
          $SVC_HOME/cloud).`;

export const modelsCommand: Command = {
  ...listed("models"),
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      {
        name: { type: "string" },
        upstream: { type: "string" },
        "adapter-model": { type: "string" },
        "lora-dir": { type: "string" },
        "lora-dir-on-server": { type: "string" },
        replace: { type: "boolean" },
        data: { type: "string" },
        json: { type: "boolean" },
      },
      USAGE,
    );
    const [sub, target, extra] = positionals;
    if (values.help || !sub) {
      process.stdout.write(USAGE + "\n");
      return sub || values.help ? 0 : 2;
    }
    if (extra !== undefined) throw new CliError(`unexpected argument "${extra}"\nusage: ${USAGE.split("\n")[0]}`, 2);
    if (sub === "list") return listModelsCommand(Boolean(values.json));
    if (sub === "discover") return discoverModelsCommand(Boolean(values.json));
    if (sub === "add") {
      return addModelCommand({
        target,
        name: values.name,
        upstream: values.upstream,
        adapterModel: values["adapter-model"],
        loraDir: values["lora-dir"],
        loraDirOnServer: values["lora-dir-on-server"],
        replace: values.replace,
        dataDir: values.data,
      });
    }
    throw new CliError(`unknown subcommand "models ${sub}"\nusage: ${USAGE.split("\n")[0]}`, 2);
  },
};
