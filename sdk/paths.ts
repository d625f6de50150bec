/** Where svc keeps its files (DESIGN.md section 2). */
import os from "node:os";
import path from "node:path";

export const svcHome = (): string => process.env.SVC_HOME || path.join(os.homedir(), ".svc");
export const credentialsPath = (): string => path.join(svcHome(), "credentials.json");
export const defaultCloudDataDir = (): string => path.join(svcHome(), "cloud");
export const projectStatePath = (projectDir: string): string => path.join(projectDir, ".svc", "state.json");
export const trainerBundlePath = (projectDir: string): string => path.join(projectDir, ".svc", "build", "index.mjs");

export const DEFAULT_CLOUD_PORT = 7870;
export const DEFAULT_EDGE_PORT = 7871;
export const DEFAULT_STUDIO_PORT = 7860;
