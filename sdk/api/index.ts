/** The cloud's JSON routes that CloudClient gets one method each for (its streams and uploads it reads itself). */
import { accountsApi } from "./accounts.js";
import { deploymentsApi } from "./deployments.js";
import { jobsApi } from "./jobs.js";
import { keysApi } from "./keys.js";
import { modelsApi } from "./models.js";

export const cloudApi = { ...accountsApi, ...jobsApi, ...deploymentsApi, ...keysApi, ...modelsApi };
export type CloudApi = typeof cloudApi;
