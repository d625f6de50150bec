import assert from "node:assert/strict";
import { availableMemory, darwinAvailable } from "../../../engine/memory.js";

/** `vm_stat` as macOS 14 on Apple Silicon prints it (16 KiB pages). */
const VM_STAT = `Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                                3000.
Pages active:                            400000.
Pages inactive:                          200000.
Pages speculative:                         5000.
Pages throttled:                              0.
Pages wired down:                        150000.
Pages purgeable:                          10000.
"Translation faults":                 123456789.
`;

describe("platform: memory probes mean the same on every OS", () => {
  const freemem = () => 3000 * 16384;
  const noVmStat = () => {
    throw new Error("vm_stat must not run off macOS");
  };

  it("macOS counts inactive, speculative and purgeable pages, which os.freemem() leaves out", () => {
    const bytes = availableMemory({ platform: "darwin", freemem, vmStat: () => VM_STAT });
    assert.equal(bytes, (3000 + 200000 + 5000 + 10000) * 16384);
    assert.ok(bytes > 70 * freemem());
  });

  it("macOS without a readable vm_stat falls back to os.freemem()", () => {
    assert.equal(availableMemory({ platform: "darwin", freemem, vmStat: () => "garbage" }), freemem());
    assert.equal(availableMemory({ platform: "darwin", freemem, vmStat: noVmStat }), freemem());
    assert.equal(darwinAvailable("Pages free: 5."), undefined);
  });

  it("Linux and Windows use os.freemem(), which already counts reclaimable memory there", () => {
    assert.equal(availableMemory({ platform: "linux", freemem: () => 123, vmStat: noVmStat }), 123);
    assert.equal(availableMemory({ platform: "win32", freemem: () => 456, vmStat: noVmStat }), 456);
  });

  it("on this machine, a positive number", () => {
    assert.ok(availableMemory() > 0);
  });
});
