/**
 * One lock that holds: starters racing for one data dir, as VS Code and a terminal starting the
 * daemon at once do. Four processes take the lock with the cloud's own code at the same moment,
 * round after round, on a fresh data dir and on one whose lock a killed cloud left behind; in
 * every round exactly one holds it and the others are told who does. (A starter that read the
 * lock file between its creation and its pid being written took it for stale and removed it, so
 * two held it.) Then real `svc cloud serve` processes race for one data dir: one serves.
 */
import assert from "node:assert/strict";
import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { cliPath } from "../support/cloud.js";

const CONTENDERS = 4;
const ROUNDS = 50;

interface Answer {
  pid: number;
  ready?: boolean;
  held?: boolean;
  locked?: boolean;
  error?: string;
  released?: boolean;
}

describe("data dir lock: racing starters", function () {
  this.timeout(240_000);
  let tmp: TempDir;
  const contenders: ChildProcess[] = [];
  before(async () => {
    tmp = await createTempDir("lock-race");
  });
  after(async () => {
    for (const child of contenders) child.kill("SIGKILL");
    await tmp?.remove();
  });

  /** The next message from a contender that matches. */
  function answer(child: ChildProcess, match: (a: Answer) => boolean): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: Answer) => {
        if (!match(message)) return;
        child.off("message", onMessage);
        child.off("exit", onExit);
        resolve(message);
      };
      const onExit = (code: number | null) => reject(new Error(`contender ${child.pid} exited (${code})`));
      child.on("message", onMessage);
      child.once("exit", onExit);
    });
  }

  /** The pid of a process that has exited: what a cloud killed with -9 leaves in its lock file. */
  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    return child.pid!;
  }

  it(`${CONTENDERS} processes, ${ROUNDS} rounds: exactly one holds the lock each round`, async () => {
    for (let i = 0; i < CONTENDERS; i++) {
      const child = fork(path.join(import.meta.dirname, "../support/lockContender.ts"), [], {
        execArgv: ["--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      contenders.push(child);
    }
    await Promise.all(contenders.map((child) => answer(child, (a) => a.ready === true)));
    const dead = await deadPid();
    let staleRounds = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const dir = path.join(tmp.path, `round-${round}`);
      mkdirSync(dir);
      // Every other round starts from the lock a killed cloud left behind.
      if (round % 2 === 0) {
        writeFileSync(path.join(dir, "cloud.lock"), String(dead));
        staleRounds++;
      }
      const answers = await Promise.all(
        contenders.map((child) => {
          const reply = answer(child, (a) => a.held !== undefined);
          child.send({ go: dir });
          return reply;
        }),
      );
      const holders = answers.filter((a) => a.held);
      assert.equal(holders.length, 1, `round ${round}: ${holders.length} processes hold the lock: ${JSON.stringify(answers)}`);
      const [holder] = holders;
      assert.equal(readFileSync(path.join(dir, "cloud.lock"), "utf8"), String(holder.pid), `round ${round}: the lock file names its holder`);
      for (const other of answers.filter((a) => !a.held)) {
        assert.ok(other.locked, `round ${round}: ${other.pid} failed otherwise: ${other.error}`);
        assert.match(other.error ?? "", new RegExp(`\\(pid ${holder.pid}\\) is already using the data dir`));
      }
      const child = contenders.find((c) => c.pid === holder.pid)!;
      const released = answer(child, (a) => a.released === true);
      child.send({ release: true });
      await released;
      assert.equal(existsSync(path.join(dir, "cloud.lock")), false, `round ${round}: released`);
    }
    assert.equal(staleRounds, ROUNDS / 2);
  });

  it("two `svc cloud serve` on one data dir at once: one serves, the other says who holds it", async () => {
    for (let round = 1; round <= 3; round++) {
      const home = path.join(tmp.path, `serve-${round}`);
      const dataDir = path.join(home, "cloud");
      mkdirSync(dataDir, { recursive: true });
      const starts = [0, 1].map(() => {
        const child = spawn(process.execPath, [cliPath, "cloud", "serve", "--port", "0", "--edge-port", "0", "--data", dataDir, "--workers", "0"], {
          env: { ...process.env, SVC_HOME: home, SVC_DATABASE_URL: "" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stderr = "";
        child.stderr!.on("data", (chunk) => (stderr += chunk));
        const outcome = new Promise<{ child: ChildProcess; serving: boolean; stderr: () => string }>((resolve) => {
          createInterface({ input: child.stdout! }).once("line", () => resolve({ child, serving: true, stderr: () => stderr }));
          child.once("exit", () => resolve({ child, serving: false, stderr: () => stderr }));
        });
        return outcome;
      });
      const outcomes = await Promise.all(starts);
      try {
        const serving = outcomes.filter((o) => o.serving);
        assert.equal(serving.length, 1, `round ${round}: ${serving.length} clouds serve one data dir\n${outcomes.map((o) => o.stderr()).join("\n")}`);
        const refused = outcomes.find((o) => !o.serving)!;
        assert.match(refused.stderr(), new RegExp(`another svc cloud \\(pid ${serving[0].child.pid}\\) is already using the data dir`));
      } finally {
        for (const { child } of outcomes) {
          if (child.exitCode !== null || child.signalCode !== null) continue;
          const exited = new Promise((resolve) => child.once("exit", resolve));
          child.kill("SIGTERM");
          await exited;
        }
      }
    }
  });
});
