/**
 * Test and bench helper: a fresh anonymous user with one project, signed in the way `svc init`
 * leaves a machine: credentials in SVC_HOME (read from the environment, like every svc process),
 * and `.svc/state.json` in the project folder naming the project.
 */
import { CloudClient } from "../../sdk/client.js";
import { writeCredentials } from "../../sdk/credentials.js";
import { writeProjectState } from "../../sdk/state.js";

export interface SignedInProject {
  token: string;
  projectId: string;
  /** A client of the new user, scoped to the project. */
  client: CloudClient;
}

export async function signInWithNewProject(cloudUrl: string, projectDir: string, name = "test"): Promise<SignedInProject> {
  const { token } = await CloudClient.createAnonymousToken(cloudUrl);
  const project = await new CloudClient({ baseUrl: cloudUrl, token }).createProject({ name });
  await writeCredentials({ kind: "anonymous", cloudUrl, token });
  await writeProjectState(projectDir, { orgSlug: project.orgSlug, projectSlug: project.slug, projectId: project.id });
  return { token, projectId: project.id, client: new CloudClient({ baseUrl: cloudUrl, token, projectId: project.id }) };
}
