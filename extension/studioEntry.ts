/** Entry of dist/extension/studio.cjs: the studio server, bundled apart from activate() (see scripts/build-extension.mjs). */
export { createStudioServer } from "../studio/index.js";
