/**
 * Test fixtures that take Python minutes to make (random-weight Hugging Face folders, their
 * converted GGUFs) built once per machine and shared by every test process, instead of once per
 * mocha process: the unit and integration suites run in separate processes and ask for some of
 * the same models.
 *
 *   sharedBuild(name, key, build) → a folder under $TMPDIR/svc-test-builds/ named by `name` and a
 *                                   hash of `key`; `build(dir)` fills it the first time
 *   pythonFingerprint(python)     → what a Python build's output depends on besides its
 *                                   arguments: the interpreter and its packages' versions
 *
 * The key must hold everything the output is made from (the script's text, the options, the
 * inputs' identity), so a changed script or package gives a new folder and never a stale one.
 * A build writes into a private name and renames it into place, so two processes never see a
 * half-made folder (both may build; the first rename wins). Like the llama.cpp source tree
 * (llamaCppSource.ts), these folders outlive the run; delete $TMPDIR/svc-test-builds to rebuild.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

const inFlight = new Map<string, Promise<string>>();

export function sharedBuildRoot(): string {
  return path.join(tmpdir(), "svc-test-builds");
}

export function sharedBuild(name: string, key: unknown, build: (dir: string) => Promise<void>): Promise<string> {
  const id = createHash("sha256").update(JSON.stringify(key)).digest("hex").slice(0, 16);
  const dir = path.join(sharedBuildRoot(), `${name}-${id}`);
  let pending = inFlight.get(dir);
  if (!pending) {
    pending = (async () => {
      if (existsSync(dir)) return dir;
      const partial = `${dir}.${process.pid}.${Math.random().toString(36).slice(2)}.partial`;
      await mkdir(partial, { recursive: true });
      try {
        await build(partial);
        await rename(partial, dir);
      } catch (err) {
        await rm(partial, { recursive: true, force: true });
        if (existsSync(dir)) return dir; // another process renamed its build into place first
        throw err;
      }
      return dir;
    })();
    inFlight.set(dir, pending);
    pending.catch(() => inFlight.delete(dir));
  }
  return pending;
}

/** The interpreter's path and the versions of the packages the builds use (their dist-info names). */
export function pythonFingerprint(python: string): string[] {
  const lib = path.join(path.dirname(python), "..", "lib");
  const packages: string[] = [];
  try {
    for (const version of readdirSync(lib)) {
      const site = path.join(lib, version, "site-packages");
      if (!existsSync(site)) continue;
      for (const entry of readdirSync(site)) {
        if (/^(torch|transformers|gguf|safetensors|numpy|sentencepiece|tokenizers|protobuf)-.*\.dist-info$/.test(entry)) packages.push(entry);
      }
    }
  } catch {
    // Not a venv (SVC_PYTHON names a system Python): its path alone keys the builds.
  }
  return [python, ...packages.sort()];
}
