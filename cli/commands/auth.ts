/** `svc login`, `svc logout`, `svc whoami`: implemented with the OAuth device flow. */
import type { Command } from "../command.js";
import { CliError } from "../output.js";

const notYet = (name: string): Command => ({
  name,
  summary: `${name} (OAuth device flow)`,
  usage: `svc ${name}`,
  async run() {
    throw new CliError(`svc ${name} is not available yet`);
  },
});

export const loginCommand = notYet("login");
export const logoutCommand = notYet("logout");
export const whoamiCommand = notYet("whoami");
