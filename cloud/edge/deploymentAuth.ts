/**
 * Decides whether a request may use a deployment: it must exist, be enabled and not deleted
 * (else 404, the same answer as an unknown slug, so slugs cannot be probed), and under
 * `fixed_api_key` carry `Authorization: Bearer <key>` of one of its enabled keys (else 401), not
 * past its expiry (else 401 `expired`, also a rotated key after its grace).
 * Failed attempts are rate limited (429) per client address and presented key: see limiterBucket.
 */
import type { FastifyRequest } from "fastify";
import { sha256Hex } from "../domain/ids.js";
import { DISPLAY_PREFIX_LENGTH, hashesEqual } from "../domain/keys.js";
import type { AuthFailureLimiter } from "./authFailureLimiter.js";
import type { CachedKey, DeploymentCache, DeploymentState } from "./deploymentCache.js";
import { EdgeError, edgeNotFound } from "./errors.js";
import type { LastUsedRecorder } from "./lastUsedRecorder.js";

export class DeploymentAuth {
  constructor(
    private readonly cache: DeploymentCache,
    private readonly limiter: AuthFailureLimiter,
    private readonly lastUsed: LastUsedRecorder,
    private readonly now: () => number = Date.now,
    /** Told of each request refused because its key expired: it counts in the key's usage as a 401. */
    private readonly onExpired: (deployment: DeploymentState, key: CachedKey) => void = () => undefined,
  ) {}

  async authorize(request: FastifyRequest, slug: string): Promise<DeploymentState> {
    return (await this.authorizeKey(request, slug)).deployment;
  }

  /** As `authorize`, with the key the request used (null when the deployment needs none). */
  async authorizeKey(request: FastifyRequest, slug: string): Promise<{ deployment: DeploymentState; key: CachedKey | null }> {
    const deployment = await this.cache.get(slug);
    if (!deployment) throw edgeNotFound(`deployment "${slug}" not found`);
    if (deployment.authMode === "none") return { deployment, key: null };

    const key = bearer(request.headers.authorization);
    const bucket = limiterBucket(request.ip, deployment, key);
    const retryAfter = this.limiter.retryAfter(bucket);
    if (retryAfter > 0) throw new EdgeError(429, "rate_limit_exceeded", `too many failed authentication attempts; retry in ${retryAfter} s`, null, retryAfter);
    if (!key) {
      this.limiter.recordFailure(bucket);
      throw new EdgeError(401, "invalid_api_key", "this deployment requires an API key: send Authorization: Bearer <API_KEY>");
    }
    const hash = sha256Hex(key);
    const stored = deployment.keys.get(hash);
    // The lookup by digest finds the candidate (its timing reveals nothing usable about a key);
    // the constant-time compare of the stored digest is what accepts it.
    if (!stored || !hashesEqual(stored.hash, hash)) {
      this.limiter.recordFailure(bucket);
      throw new EdgeError(401, "invalid_api_key", `Incorrect API key provided: ${redact(key)}`);
    }
    if (stored.expiresAtMs !== null && this.now() >= stored.expiresAtMs) {
      this.onExpired(deployment, stored);
      throw new EdgeError(401, "expired", `This API key expired at ${new Date(stored.expiresAtMs).toISOString()}: issue a new key for this endpoint.`);
    }
    this.lastUsed.note(stored.id);
    return { deployment, key: stored };
  }
}

/**
 * Every local client shares 127.0.0.1, so an address alone would let one misconfigured client
 * (no key, a revoked key, a key of another deployment) lock out every other local client. A
 * presented key whose display prefix is one of this deployment's enabled keys gets a bucket of
 * its own, so those failures never touch it; everything else (no key, unknown prefixes: what
 * random guessing sends) shares one bucket per address, so varying the key does not escape the
 * limit. Only bad keys that start like a valid one (a typo of it) count against that key.
 */
function limiterBucket(address: string, deployment: DeploymentState, key: string | null): string {
  const prefix = key?.slice(0, DISPLAY_PREFIX_LENGTH);
  return prefix !== undefined && deployment.keyPrefixes.has(prefix) ? `${address} ${deployment.id} ${prefix}` : `${address} *`;
}

function bearer(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return match ? match[1] : null;
}

/** Enough of a key to recognise it in an error message, never enough to use it. */
function redact(key: string): string {
  return key.length <= 12 ? "***" : `${key.slice(0, 12)}***${key.slice(-2)}`;
}
