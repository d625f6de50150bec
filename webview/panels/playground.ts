/** Entry point of the VS Code Playground panel (contract: ui-shared/protocol/playground.ts). */
import PlaygroundPanel from "./PlaygroundPanel.svelte";
import { startPanel } from "./startPanel.js";
import { PLAYGROUND_DID_CHANGE_STATE, type PlaygroundState } from "../../ui-shared/protocol/playground.js";

startPanel(PLAYGROUND_DID_CHANGE_STATE, PlaygroundPanel, (state: PlaygroundState, transport) => ({
  transport,
  jobId: state.jobId,
  compare: state.compare === true,
}));
