/** `<project>/.svc/state.json`: which cloud project this folder belongs to. */
import { projectStatePath } from "./paths.js";
import { readJsonFile, writeFileAtomic } from "./files.js";

export interface ProjectState {
  orgSlug: string;
  projectSlug: string;
  projectId: string;
}

export async function readProjectState(projectDir: string): Promise<ProjectState | null> {
  const file = projectStatePath(projectDir);
  const state = await readJsonFile<ProjectState>(file);
  if (state && (typeof state.projectId !== "string" || !state.projectId)) throw new Error(`${file} has no projectId`);
  return state;
}

export async function writeProjectState(projectDir: string, state: ProjectState): Promise<void> {
  await writeFileAtomic(projectStatePath(projectDir), JSON.stringify(state, null, 2) + "\n", 0o644);
}
