/**
 * `svc login`, `svc logout`, `svc whoami`: signing the CLI in to the cloud with the OAuth 2.0
 * device flow (RFC 8628) approved by the cloud's owner, signing out, and showing who is signed in.
 * Tokens are never printed.
 */
import { rm } from "node:fs/promises";
import path from "node:path";
import { CloudClient } from "../../sdk/client.js";
import { deleteCredentials, readCredentials, writeCredentials, type Credentials, type OAuthCredentials } from "../../sdk/credentials.js";
import { liveDaemon, resolveCloudUrl } from "../../sdk/daemon.js";
import { AuthenticationError } from "../../sdk/errors.js";
import { readJsonFile, writeFileAtomic } from "../../sdk/files.js";
import { approveDeviceCode, OAUTH_CLIENT_ID, pollDeviceToken, requestDeviceCode, type DeviceCode } from "../../sdk/oauth.js";
import { ownerApprovalProof, ownerKeyPath, readOwnerKey } from "../../sdk/ownerApproval.js";
import { credentialsPath, defaultCloudDataDir, svcHome } from "../../sdk/paths.js";
import { ProjectSession } from "../../sdk/session.js";
import type { ProjectState } from "../../sdk/state.js";
import type { Me } from "../../sdk/wire.js";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { CliError } from "../output.js";

const NOT_SIGNED_IN = "not signed in: run `svc login`";

// --- svc login ----------------------------------------------------------------------------------

const LOGIN_USAGE = `svc login [--no-wait]
svc login --approve CODE [--data DIR]

Signs the CLI in to the svc cloud (OAuth device flow): asks the cloud for a code, waits until the
cloud's owner approves it, then saves the credentials in $SVC_HOME/credentials.json (mode 0600).
Ctrl-C cancels without saving anything.

Only the OS user who runs the cloud can approve: run as that user on that computer, \`svc login\`
approves its own code at once (it can read the cloud's owner key in the data dir); anywhere else
(another account, or through a tunnel) it prints a code for that user to approve with
\`svc login --approve CODE\`. The /device page shows a code and can deny it; it never approves.

options:
  --no-wait         print the code and exit at once; run \`svc login\` again after it is approved
                    to finish signing in (the pending code is kept until it expires)
  --approve CODE    approve the sign-in with this code, as the cloud's owner
  --data DIR        the cloud's data dir, where its owner key is (default $SVC_HOME/cloud)

environment: SVC_CLOUD_URL selects the cloud (default: the local daemon, started if needed).`;

/** A device code waiting for approval, kept between `svc login --no-wait` and `svc login`. */
interface PendingLogin {
  cloudUrl: string;
  code: DeviceCode;
  expiresAt: string;
}

// Holds the device code, a secret that can be exchanged for tokens once approved: same mode as credentials.
const pendingLoginPath = (): string => path.join(svcHome(), "login-pending.json");

export const loginCommand: Command = {
  ...listed("login"),
  usage: LOGIN_USAGE,
  async run(argv) {
    const { values } = parse(argv, { "no-wait": { type: "boolean" }, approve: { type: "string" }, data: { type: "string" } }, LOGIN_USAGE);
    if (values.help) {
      process.stdout.write(LOGIN_USAGE + "\n");
      return 0;
    }
    const dataDir = values.data ?? defaultCloudDataDir();
    if (values.approve !== undefined) return approveAsOwner(values.approve, dataDir);
    const cloudUrl = await resolveCloudUrl();
    const pending = await readPendingLogin(cloudUrl);
    const code = pending?.code ?? (await requestDeviceCode(cloudUrl));
    if (!pending && (await approveOwnCode(cloudUrl, code, dataDir))) return waitForApproval(cloudUrl, code, "Finishing the sign-in (Ctrl-C cancels)...");
    printInstructions(cloudUrl, code, Boolean(pending));
    if (values["no-wait"]) {
      if (!pending) {
        await writeFileAtomic(
          pendingLoginPath(),
          JSON.stringify({ cloudUrl, code, expiresAt: new Date(Date.now() + code.expires_in * 1000).toISOString() }) + "\n",
        );
      }
      process.stdout.write("\nAfter it is approved, run `svc login` again to finish signing in.\n");
      return 0;
    }
    return waitForApproval(cloudUrl, code);
  },
};

/**
 * Run as the cloud's own OS user, `svc login` can read the cloud's owner key, so it approves its
 * own code: the person who could approve is the one at this terminal. Any refusal (another
 * cloud's key, no key) falls back to asking the owner.
 */
async function approveOwnCode(cloudUrl: string, code: DeviceCode, dataDir: string): Promise<boolean> {
  const key = await readOwnerKey(dataDir);
  if (!key) return false;
  const approval = await approveDeviceCode(cloudUrl, code.user_code, ownerApprovalProof(key, code.user_code)).catch(() => null);
  if (!approval?.approved) return false;
  process.stdout.write(`Signing in to ${cloudUrl}: approved as ${approval.user}, the user who runs this cloud (owner key in ${dataDir}).\n`);
  return true;
}

/** `svc login --approve CODE`: the owner approves a code that a `svc login` elsewhere printed. */
async function approveAsOwner(userCode: string, dataDir: string): Promise<number> {
  if (!userCode.trim()) throw new CliError("--approve needs the code that `svc login` printed, e.g. `svc login --approve ABCD-EFGH`");
  const key = await readOwnerKey(dataDir);
  if (!key) {
    throw new CliError(
      `cannot read the cloud's owner key ${ownerKeyPath(dataDir)}: run this as the user who runs the svc cloud, on its computer (--data DIR names another data dir)`,
    );
  }
  const cloudUrl = process.env.SVC_CLOUD_URL?.replace(/\/+$/, "") || (await liveDaemon(dataDir))?.cloudUrl;
  if (!cloudUrl) throw new CliError(`no svc cloud is running with the data dir ${dataDir} (set SVC_CLOUD_URL to name one)`);
  const approval = await approveDeviceCode(cloudUrl, userCode, ownerApprovalProof(key, userCode));
  if (!approval.approved) throw new CliError(`the cloud at ${cloudUrl} did not approve ${userCode}: ${approval.message}`);
  process.stdout.write(
    `Approved the sign-in ${userCode.toUpperCase()} to ${cloudUrl} as ${approval.user}. The \`svc login\` that printed it finishes on its own.\n`,
  );
  return 0;
}

function printInstructions(cloudUrl: string, code: DeviceCode, resumed: boolean): void {
  const lines = [
    resumed ? `Finishing the sign-in to ${cloudUrl} started earlier.` : `Signing in to ${cloudUrl}.`,
    "",
    "The sign-in code is:",
    "",
    `    ${code.user_code}`,
    "",
    "The user who runs the svc cloud approves it by running this on the cloud's computer:",
    "",
    `    svc login --approve ${code.user_code}`,
    "",
    `(${code.verification_uri} shows the request and can deny it; it cannot approve.)`,
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

async function waitForApproval(cloudUrl: string, code: DeviceCode, waiting = "Waiting for approval (Ctrl-C cancels)..."): Promise<number> {
  process.stdout.write(`\n${waiting}\n`);
  // Nothing is written before approval, so stopping at once leaves no half-done state behind.
  const cancel = () => {
    process.stderr.write("\nsvc: sign-in cancelled; no credentials were saved\n");
    process.exit(130);
  };
  process.once("SIGINT", cancel);
  let credentials: OAuthCredentials;
  try {
    credentials = await pollDeviceToken(cloudUrl, code);
  } catch (err) {
    await clearPendingLogin();
    throw new CliError((err as Error).message);
  } finally {
    process.off("SIGINT", cancel);
  }
  await clearPendingLogin();
  const previous = await readCredentials().catch(() => null);
  await writeCredentials(credentials);
  const me = await new CloudClient({ baseUrl: cloudUrl, token: credentials.accessToken }).me();
  process.stdout.write(`\nSigned in to ${cloudUrl} as ${me.user.name} (OAuth user ${me.user.id}).\n`);
  if (previous?.kind === "anonymous") {
    process.stdout.write("This replaced the anonymous credentials; projects created with them stay with the anonymous user.\n");
  }
  return 0;
}

async function readPendingLogin(cloudUrl: string): Promise<PendingLogin | null> {
  const pending = await readJsonFile<PendingLogin>(pendingLoginPath()).catch(() => null);
  if (!pending || pending.cloudUrl !== cloudUrl || !pending.code?.device_code) return null;
  // A code within a few seconds of expiring is not worth resuming: the person could not approve it in time.
  if (Date.parse(pending.expiresAt) - Date.now() < 15_000) {
    await clearPendingLogin();
    return null;
  }
  const remaining = Math.floor((Date.parse(pending.expiresAt) - Date.now()) / 1000);
  return { ...pending, code: { ...pending.code, expires_in: remaining } };
}

async function clearPendingLogin(): Promise<void> {
  await rm(pendingLoginPath(), { force: true });
}

// --- svc logout ---------------------------------------------------------------------------------

const LOGOUT_USAGE = `svc logout

Deletes $SVC_HOME/credentials.json. For OAuth credentials it first asks the cloud to revoke the
refresh token (and with it every token of that sign-in); when the cloud cannot be reached the
tokens simply expire.`;

export const logoutCommand: Command = {
  ...listed("logout"),
  usage: LOGOUT_USAGE,
  async run(argv) {
    const { values } = parse(argv, {}, LOGOUT_USAGE);
    if (values.help) {
      process.stdout.write(LOGOUT_USAGE + "\n");
      return 0;
    }
    await clearPendingLogin();
    const file = credentialsPath();
    const credentials = await readCredentials().catch(() => null);
    const revoked = credentials?.kind === "oauth" ? await revokeRefreshToken(credentials) : false;
    if (!(await deleteCredentials(file))) {
      process.stdout.write(`Not signed in: there was no credentials file at ${file}.\n`);
      return 0;
    }
    process.stdout.write(`Signed out: deleted ${file}.\n`);
    if (credentials?.kind === "oauth") {
      process.stdout.write(
        revoked
          ? "The cloud revoked the OAuth tokens of this sign-in.\n"
          : `Could not reach ${credentials.cloudUrl} to revoke the OAuth tokens; they expire on their own.\n`,
      );
    }
    return 0;
  },
};

/** RFC 7009 revocation; true when the cloud answered 200 (which it also does for unknown tokens). */
async function revokeRefreshToken(credentials: OAuthCredentials): Promise<boolean> {
  if (!credentials.refreshToken) return false;
  try {
    const response = await fetch(`${credentials.cloudUrl}/v1/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: credentials.refreshToken, token_type_hint: "refresh_token", client_id: OAUTH_CLIENT_ID }),
      signal: AbortSignal.timeout(3000),
    });
    return response.ok;
  } catch {
    return false;
  }
}

// --- svc whoami ---------------------------------------------------------------------------------

const WHOAMI_USAGE = `svc whoami [--json]

Shows the credentials in use (anonymous or OAuth), the user, the cloud URL, your orgs and
projects with their ids, and the project of the current folder (.svc/state.json) if any.
Exits 1 when not signed in.

options:
  --json    print the same as one JSON object`;

export const whoamiCommand: Command = {
  ...listed("whoami"),
  usage: WHOAMI_USAGE,
  async run(argv) {
    const { values } = parse(argv, { json: { type: "boolean" } }, WHOAMI_USAGE);
    if (values.help) {
      process.stdout.write(WHOAMI_USAGE + "\n");
      return 0;
    }
    const credentials = await readCredentials();
    if (!credentials) throw new CliError(NOT_SIGNED_IN);
    const session = await ProjectSession.open({ projectDir: process.cwd(), mintAnonymous: false });
    let me: Me;
    try {
      me = await session.client().me();
    } catch (err) {
      if (err instanceof AuthenticationError) throw new CliError(`the saved credentials are no longer valid at ${session.cloudUrl}: run \`svc login\``);
      throw err;
    }
    const state = await session.state();
    const report: WhoamiReport = { kind: credentials.kind, cloudUrl: session.cloudUrl, ...me, folderProject: state };
    process.stdout.write(values.json ? JSON.stringify(report, null, 2) + "\n" : formatWhoami(report));
    return 0;
  },
};

interface WhoamiReport extends Me {
  kind: Credentials["kind"];
  cloudUrl: string;
  /** The current folder's `.svc/state.json`, or null. */
  folderProject: ProjectState | null;
}

function formatWhoami(report: WhoamiReport): string {
  const lines = [
    `kind      ${report.kind}`,
    `user      ${report.user.name} (${report.user.id})`,
    `cloud     ${report.cloudUrl}`,
    "",
    "orgs",
    ...(report.orgs.length ? report.orgs.map((org) => `  ${org.slug}  ${org.name}  (${org.id})`) : ["  (none)"]),
    "",
    "projects",
    ...(report.projects.length ? report.projects.map((p) => `  ${p.orgSlug}/${p.slug}  ${p.name}  (${p.id})`) : ["  (none)"]),
    "",
  ];
  const state = report.folderProject;
  if (state) {
    const known = report.projects.some((p) => p.id === state.projectId);
    lines.push(`this folder  ${state.orgSlug}/${state.projectSlug}  (${state.projectId})${known ? "" : "  — not one of your projects"}`);
  } else {
    lines.push("this folder  no project (.svc/state.json is absent)");
  }
  return lines.join("\n") + "\n";
}
