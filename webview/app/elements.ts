/**
 * Registers the vscode-elements custom elements we render. Imported for its side effect by every
 * entry point before mounting, so Svelte sets their properties (not attributes) on first render.
 */
import "@vscode-elements/elements/dist/vscode-badge/index.js";
import { VscodeButton } from "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-icon/index.js";
import "@vscode-elements/elements/dist/vscode-progress-ring/index.js";
import "@vscode-elements/elements/dist/vscode-textfield/index.js";

// vscode-button is a role="button" host that reflects `disabled` as an attribute, which ARIA
// ignores on a custom element: screen readers announced disabled buttons as usable. Mirror the
// state into aria-disabled on every button after each update, in this one place.
VscodeButton.addInitializer((element) => {
  const button = element as VscodeButton;
  button.addController({
    hostUpdated() {
      if (button.disabled) button.setAttribute("aria-disabled", "true");
      else button.removeAttribute("aria-disabled");
    },
  });
});
