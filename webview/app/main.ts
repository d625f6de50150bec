/** Entry point of the browser SPA served by the studio (`svc dev`). */
import { mount } from "svelte";
import "./elements.js";
import "../styles/theme.css";
import "../styles/base.css";
import App from "./App.svelte";
import { HttpTransport, readStudioToken } from "../../ui-shared/studioHttpClient.js";

// "." keeps every API call relative to the page, so the studio also works behind a path prefix
// (code-server's /proxy/<port>/ when VS Code opens it through asExternalUri).
const transport = new HttpTransport(readStudioToken(), ".");
mount(App, { target: document.getElementById("app") ?? document.body, props: { transport } });
