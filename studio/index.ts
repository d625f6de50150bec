/** The studio server's public surface (used by `svc dev` and, later, the VS Code extension). */
export { createStudioServer, type StudioOptions, type StudioServer } from "./server.js";
export { defaultSvcCommand, type SvcCommand } from "./svcCommand.js";
export { TOKEN_HEADER, TOKEN_QUERY } from "./guard.js";
