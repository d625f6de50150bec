/**
 * Python discovery per platform, by injection: where svc's torch venv lives and which interpreters
 * are tried, in order, on Windows, macOS and Linux (engine/backends/torch/venv.ts, detect.ts).
 */
import assert from "node:assert/strict";
import { pythonCandidates } from "../../../engine/backends/torch/detect.js";
import { systemPythons, torchVenvDir, torchVenvPython, type PythonPlatform } from "../../../engine/backends/torch/venv.js";

const windows: PythonPlatform = { platform: "win32", env: { LOCALAPPDATA: "C:\\Users\\Ada Lovelace\\AppData\\Local" }, home: "C:\\Users\\Ada Lovelace" };
const mac: PythonPlatform = { platform: "darwin", env: {}, home: "/Users/ada" };
const linux: PythonPlatform = { platform: "linux", env: { XDG_CACHE_HOME: "/home/ada/.xdg-cache" }, home: "/home/ada" };

describe("Python discovery per platform (injected)", () => {
  it("puts the venv in each platform's cache folder, or where SVC_TORCH_VENV says", () => {
    assert.equal(torchVenvDir(windows), "C:\\Users\\Ada Lovelace\\AppData\\Local\\svc\\torch-venv");
    assert.equal(torchVenvDir({ ...windows, env: {} }), "C:\\Users\\Ada Lovelace\\AppData\\Local\\svc\\torch-venv");
    assert.equal(torchVenvDir(mac), "/Users/ada/.cache/svc/torch-venv");
    assert.equal(torchVenvDir(linux), "/home/ada/.xdg-cache/svc/torch-venv");
    assert.equal(torchVenvDir({ ...linux, env: { SVC_TORCH_VENV: "/opt/svc-venv" } }), "/opt/svc-venv");
  });

  it("runs the venv's own interpreter: Scripts\\python.exe on Windows, bin/python elsewhere", () => {
    assert.equal(torchVenvPython(torchVenvDir(windows), windows), "C:\\Users\\Ada Lovelace\\AppData\\Local\\svc\\torch-venv\\Scripts\\python.exe");
    assert.equal(torchVenvPython(torchVenvDir(mac), mac), "/Users/ada/.cache/svc/torch-venv/bin/python");
  });

  it("tries SVC_PYTHON, the venv, then the system Python the platform has", () => {
    assert.deepEqual(systemPythons(windows), ["python", "python3"]);
    assert.deepEqual(systemPythons(linux), ["python3", "/usr/bin/python3"]);
    assert.deepEqual(pythonCandidates(undefined, windows), [
      "C:\\Users\\Ada Lovelace\\AppData\\Local\\svc\\torch-venv\\Scripts\\python.exe",
      "python",
      "python3",
    ]);
    assert.deepEqual(pythonCandidates(undefined, { ...mac, env: { SVC_PYTHON: "/opt/homebrew/bin/python3.12" } }), [
      "/opt/homebrew/bin/python3.12",
      "/Users/ada/.cache/svc/torch-venv/bin/python",
      "python3",
      "/usr/bin/python3",
    ]);
    // A Python the caller names is the only one tried.
    assert.deepEqual(pythonCandidates("C:\\Python312\\python.exe", windows), ["C:\\Python312\\python.exe"]);
  });
});
