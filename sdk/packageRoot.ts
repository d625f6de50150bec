// The engine finds the package's own files too (the torch backend's Python, llama.cpp's tools), so the finder lives at
// the bottom layer; the SDK's callers keep importing it from here.
export { PACKAGE_NAME, packageRoot } from "../engine/packageRoot.js";
