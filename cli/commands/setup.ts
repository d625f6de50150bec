/** `svc setup torch`: installs the torch backend's Python packages into svc's own venv. */
import { setupTorch } from "../../engine/backends/torch/setup.js";
import { torchVenvDir } from "../../engine/backends/torch/venv.js";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";

const USAGE = `svc setup torch [--python PYTHON] [--venv DIR] [--index-url URL] [--force]

Creates svc's Python environment for the torch backend (torch, transformers, peft, accelerate,
gguf at the versions svc is tested with) and says what it found: versions and device (cuda, mps
or cpu). Training picks it up by itself (SVC_TRAIN_BACKEND=auto); SVC_PYTHON overrides it.

--python     the Python (3.10+) that creates the venv (default: python3; py -3 on Windows)
--venv       where the venv goes (default: SVC_TORCH_VENV, else ${torchVenvDir()})
--index-url  another package index for torch, e.g. https://download.pytorch.org/whl/cpu for a
             CPU-only Linux install without the CUDA libraries, or .../whl/cu126 for a CUDA build
--force      reinstall even when the pinned versions are already installed`;

export const setupCommand: Command = {
  ...listed("setup"),
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      { python: { type: "string" }, venv: { type: "string" }, "index-url": { type: "string" }, force: { type: "boolean" } },
      USAGE,
    );
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    if (positionals[0] !== "torch" || positionals.length > 1) throw new CliError(`usage: ${USAGE.split("\n")[0]}`, 2);
    const result = await setupTorch({
      python: values.python,
      venv: values.venv,
      indexUrl: values["index-url"],
      force: values.force,
      log: (line) => process.stderr.write(`  ${line}\n`),
    });
    const d = result.detection;
    process.stdout.write(
      `${result.installed ? "installed" : "already set up"}: torch ${d.torchVersion} (${d.device}), transformers ${d.transformersVersion}, peft ${d.peftVersion}\n` +
        `venv: ${result.venv}\n` +
        `training picks it (SVC_TRAIN_BACKEND=auto chooses torch); tfjs stays the zero-install path for svc-tiny\n`,
    );
    return 0;
  },
};
