// Types for scripts/install-code-server.mjs, so TypeScript callers can import it under `strict`.
export const CODE_SERVER_VERSION: string;
/** $SVC_CODE_SERVER_DIR, else ~/.cache/svc-test/code-server-<version>. */
export function defaultCodeServerDir(): string;
export function codeServerBin(dir?: string): string;
/** Installs unless the marker file says it is done; resolves with the folder and the binary. */
export function installCodeServer(options?: { dir?: string }): Promise<{ dir: string; bin: string }>;
