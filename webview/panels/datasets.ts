/** Entry point of the VS Code Datasets panel (contract: ui-shared/protocol/datasets.ts). */
import DatasetsPanel from "./DatasetsPanel.svelte";
import { startPanel } from "./startPanel.js";
import { DATASETS_DID_CHANGE_STATE, type DatasetsState } from "../../ui-shared/protocol/datasets.js";

startPanel(DATASETS_DID_CHANGE_STATE, DatasetsPanel, (_state: DatasetsState, transport) => ({ transport }));
