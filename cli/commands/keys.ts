/** `svc keys list|create|update|rotate|revoke|usage`: an endpoint's API keys and their rules, from the terminal. */
import { ProjectSession } from "../../sdk/session.js";
import type { CloudClient } from "../../sdk/client.js";
import { USAGE_RANGE_RULE, USAGE_RANGES } from "../../sdk/api/keys.js";
import { usageReportCsv } from "../../sdk/usageCsv.js";
import type { DeploymentKey, UsageRange } from "../../sdk/wire.js";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { parseDuration, rulesFromFlags } from "../keyFlags.js";
import { CliError } from "../output.js";
import { formatTable } from "../table.js";

const USAGE = `svc keys list ENDPOINT [--json]
svc keys create ENDPOINT --label LABEL [--expires-in 7d | --expires-at ISO] [--rpm N] [--tpm N] [--budget N[/day|/month|/total]]
svc keys update ENDPOINT KEY-ID [--label LABEL] [--expires-in D | --expires-at ISO | none] [--rpm N|none] [--tpm N|none] [--budget ...|none]
svc keys rotate ENDPOINT KEY-ID [--grace 1h]
svc keys revoke ENDPOINT KEY-ID
svc keys usage ENDPOINT [--range hour|day|month] [--format csv|json]

ENDPOINT is the endpoint's slug or id. A key's plaintext is printed once, by create and rotate.
--rpm/--tpm   requests / tokens per minute; past them the client gets OpenAI's 429
--budget      tokens in all (default) or per UTC day or month; past it 429 insufficient_quota
rotate        issues a new key with the same label and rules; the old one works for --grace
              (default 1h, 0 ends it now), then is refused as expired
usage         requests, errors by status, tokens, latency and time to first token (p50/p95)
              per key and for the endpoint: the last hour per minute, the last day (default)
              per 15 minutes, the last month per day`;

export const keysCommand: Command = {
  ...listed("keys"),
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      {
        json: { type: "boolean" },
        label: { type: "string" },
        "expires-in": { type: "string" },
        "expires-at": { type: "string" },
        rpm: { type: "string" },
        tpm: { type: "string" },
        budget: { type: "string" },
        grace: { type: "string" },
        format: { type: "string" },
        range: { type: "string" },
      },
      USAGE,
    );
    const [sub, endpoint, keyId, extra] = positionals;
    if (values.help || !sub) {
      process.stdout.write(USAGE + "\n");
      return sub || values.help ? 0 : 2;
    }
    if (extra !== undefined) throw new CliError(`unexpected argument "${extra}"\nusage: ${USAGE.split("\n")[0]}`, 2);
    if (!endpoint) throw new CliError(`svc keys ${sub} needs an endpoint (its slug or id)`, 2);
    const client = await projectClient();
    const deploymentId = await resolveEndpoint(client, endpoint);
    const needKey = () => {
      if (!keyId) throw new CliError(`svc keys ${sub} needs a key id (svc keys list ${endpoint} shows them)`, 2);
      return keyId;
    };
    switch (sub) {
      case "list": {
        const keys = await client.listDeploymentKeys(deploymentId);
        if (values.json) process.stdout.write(JSON.stringify(keys) + "\n");
        else if (keys.length === 0) process.stdout.write("no keys yet (svc keys create issues one)\n");
        else
          process.stdout.write(
            formatTable(
              ["ID", "LABEL", "PREFIX", "STATUS", "RULES", "USED"],
              keys.map((k) => keyRow(k)),
            ),
          );
        return 0;
      }
      case "create": {
        if (values.label === undefined) throw new CliError("svc keys create needs --label", 2);
        const created = await client.createDeploymentKey(deploymentId, { label: values.label, ...rulesFromFlags(values, Date.now()) });
        process.stdout.write(
          `${created.key}\nissued key ${created.id} "${created.label}" (${describeRules(created).join(", ") || "no rules"}); the key above is shown only once\n`,
        );
        return 0;
      }
      case "update": {
        const id = needKey();
        const current = (await client.listDeploymentKeys(deploymentId)).find((k) => k.id === id);
        if (!current) throw new CliError(`no key ${id} on this endpoint`, 1);
        const updated = await client.updateDeploymentKey(deploymentId, id, {
          ...(values.label !== undefined ? { label: values.label } : {}),
          ...rulesFromFlags(values, Date.now(), current.limits),
        });
        process.stdout.write(`key ${updated.id} "${updated.label}": ${describeRules(updated).join(", ") || "no rules"}\n`);
        return 0;
      }
      case "rotate": {
        const grace = parseDuration(values.grace ?? "1h", "--grace");
        const created = await client.rotateDeploymentKey(deploymentId, needKey(), Math.round(grace / 1000));
        process.stdout.write(
          `${created.key}\nissued key ${created.id} "${created.label}"; the old key works ${grace === 0 ? "no more" : `for ${values.grace ?? "1h"} more`}; the key above is shown only once\n`,
        );
        return 0;
      }
      case "revoke":
        await client.revokeDeploymentKey(deploymentId, needKey());
        process.stdout.write(`revoked key ${keyId}\n`);
        return 0;
      case "usage": {
        const range = values.range ?? "day";
        if (!(USAGE_RANGES as readonly string[]).includes(range)) throw new CliError(`--${USAGE_RANGE_RULE}`, 2);
        const format = values.format ?? "csv";
        if (format !== "csv" && format !== "json") throw new CliError(`--format must be csv or json`, 2);
        const report = await client.getDeploymentUsageReport(deploymentId, range as UsageRange);
        process.stdout.write(format === "json" ? JSON.stringify(report) + "\n" : usageReportCsv(report));
        return 0;
      }
      default:
        throw new CliError(`unknown subcommand "keys ${sub}"\nusage: svc keys <list|create|update|rotate|revoke|usage>`, 2);
    }
  },
};

async function projectClient(): Promise<CloudClient> {
  const session = await ProjectSession.open({ projectDir: process.cwd() });
  const state = await session.state();
  if (!state?.projectId) throw new CliError("no project in this folder: run svc keys in a project (svc init makes one)");
  return session.client(state.projectId);
}

async function resolveEndpoint(client: CloudClient, endpoint: string): Promise<string> {
  const found = (await client.listDeployments()).find((d) => d.slug === endpoint || d.id === endpoint);
  if (!found) throw new CliError(`no endpoint "${endpoint}" in this project`, 1);
  return found.id;
}

/** The rules in short words: "expires 2026-12-04T10:00:00.000Z, 30 RPM, 100000 tokens/month". */
function describeRules(k: DeploymentKey): string[] {
  return [
    ...(k.expiresAt ? [`expires ${k.expiresAt}`] : []),
    ...(k.limits.requestsPerMinute !== null ? [`${k.limits.requestsPerMinute} RPM`] : []),
    ...(k.limits.tokensPerMinute !== null ? [`${k.limits.tokensPerMinute} TPM`] : []),
    ...(k.budget ? [`${k.budget.tokens} tokens/${k.budget.period}`] : []),
  ];
}

function keyRow(k: DeploymentKey): string[] {
  const expired = k.expiresAt !== null && Date.parse(k.expiresAt) <= Date.now();
  const status = !k.enabled ? "revoked" : expired ? "expired" : k.rotatedTo ? "rotated" : "active";
  return [
    k.id,
    k.label,
    k.prefix,
    status,
    describeRules(k).join(", ") || "-",
    `${k.usage.requests} req, ${k.usage.promptTokens + k.usage.completionTokens} tok`,
  ];
}
