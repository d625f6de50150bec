/**
 * Registers the vscode-elements custom elements we render. Imported for its side effect by every
 * entry point before mounting, so Svelte sets their properties (not attributes) on first render.
 */
import "@vscode-elements/elements/dist/vscode-badge/index.js";
import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-icon/index.js";
import "@vscode-elements/elements/dist/vscode-progress-ring/index.js";
import "@vscode-elements/elements/dist/vscode-textfield/index.js";
