/**
 * What every VS Code panel's entry point does (STYLE.md 3 and 6): one VsCodeTransport, the panel's
 * root component mounted on the host's state notification (mounted afresh when a new state comes,
 * so the view starts over on the new job or deployment), that state kept for the host's serializer
 * to revive the panel after a reload, and then `webview/ready`.
 */
import { mount, unmount, type Component } from "svelte";
import "../app/elements.js";
import "../styles/theme.css";
import "../styles/base.css";
import { getVsCodeApi, VsCodeTransport } from "../transport/vscode.js";

export interface StartedPanel<S, E> {
  transport: VsCodeTransport;
  /** The mounted root's exports and the state it was mounted with; undefined before the first state. */
  current(): { root: E; state: S } | undefined;
}

export function startPanel<S, P extends Record<string, unknown>, E extends Record<string, unknown> = Record<string, never>>(
  stateMethod: string,
  root: Component<P, E>,
  propsOf: (state: S, transport: VsCodeTransport) => P,
): StartedPanel<S, E> {
  const transport = new VsCodeTransport();
  const target = document.getElementById("app") ?? document.body;
  let mounted: { root: E; state: S } | undefined;
  transport.onNotification<S>(stateMethod, (state) => {
    if (mounted) void unmount(mounted.root);
    mounted = { root: mount(root, { target, props: propsOf(state, transport) }), state };
    getVsCodeApi().setState(state);
  });
  // Handlers the caller adds after this call are in place before any message: messages arrive as later events.
  queueMicrotask(() => transport.ready());
  return { transport, current: () => mounted };
}
