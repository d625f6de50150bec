import { readFileSync } from "node:fs";
import path from "node:path";
import { packageRoot } from "../sdk/packageRoot.js";

export const packageVersion = (): string => JSON.parse(readFileSync(path.join(packageRoot(), "package.json"), "utf8")).version;
