/** Entry point of the browser SPA served by the studio (`svc dev`). */
import { mount } from "svelte";
import "./elements.js";
import "../styles/theme.css";
import "../styles/base.css";
import App from "./App.svelte";
import { HttpTransport, readStudioToken } from "../transport/http.js";

const transport = new HttpTransport(readStudioToken());
mount(App, { target: document.getElementById("app") ?? document.body, props: { transport } });
