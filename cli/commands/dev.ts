/** `svc dev`: the studio for the project in the current folder, in a browser. */
import { spawn } from "node:child_process";
import { createStudioServer } from "../../studio/index.js";
import { DEFAULT_STUDIO_PORT } from "../../sdk/paths.js";
import { type Command, parse, portOption } from "../command.js";
import { listed } from "../commandSummaries.js";

export const devCommand: Command = {
  ...listed("dev"),
  usage: "svc dev [--port N] [--open]",
  async run(argv) {
    const { values } = parse(argv, { port: { type: "string" }, open: { type: "boolean" } }, this.usage);
    if (values.help) {
      process.stdout.write(
        `usage: ${this.usage}\n\n${this.summary}. Serves on 127.0.0.1:${DEFAULT_STUDIO_PORT}, or the next free port; --port N uses exactly N (0 = any free port).\n`,
      );
      return 0;
    }
    const explicitPort = values.port !== undefined;
    const studio = await createStudioServer({
      projectDir: process.cwd(),
      host: "127.0.0.1",
      port: portOption(values.port, "--port", DEFAULT_STUDIO_PORT),
      strictPort: explicitPort,
    });
    process.stdout.write(`svc studio: ${studio.url}/\nPress Ctrl-C to stop.\n`);
    if (values.open) openBrowser(`${studio.url}/`);

    // Ctrl-C / SIGTERM: stop a training run in flight (its job is cancelled) and the server.
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve();
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    await studio.close();
    return 0;
  },
};

/** The platform's "open this URL" command; a failure is reported, never fatal (the URL is printed). */
function openBrowser(url: string): void {
  const [command, args] =
    process.platform === "darwin" ? ["open", [url]] : process.platform === "win32" ? ["cmd", ["/c", "start", "", url]] : ["xdg-open", [url]];
  const report = (reason: string) => process.stderr.write(`svc: could not open a browser (${reason}); open ${url} yourself\n`);
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true, windowsHide: true });
    child.once("error", (err) => report(err.message));
    child.once("exit", (code) => code !== 0 && code !== null && report(`${command} exited with code ${code}`));
    child.unref();
  } catch (err) {
    report((err as Error).message);
  }
}
