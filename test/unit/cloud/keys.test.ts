import assert from "node:assert/strict";
import { base62, sha256Hex } from "../../../cloud/domain/ids.js";
import { DISPLAY_PREFIX_LENGTH, generateDeploymentKey, hashesEqual, KEY_PREFIX } from "../../../cloud/domain/keys.js";

describe("deployment keys", () => {
  it("encodes bytes in base62 with a fixed width", () => {
    assert.equal(base62(new Uint8Array([0])), "00");
    assert.equal(base62(new Uint8Array([61])), "0z");
    assert.equal(base62(new Uint8Array([1, 0])), "048"); // 256 = 4*62 + 8, padded to 3 digits for 16 bits
    assert.equal(base62(new Uint8Array(32).fill(255)).length, 43);
  });

  it("generates svc_live_ keys whose hash and prefix match the plaintext", () => {
    const key = generateDeploymentKey();
    assert.ok(key.plaintext.startsWith(KEY_PREFIX));
    assert.match(key.plaintext.slice(KEY_PREFIX.length), /^[0-9A-Za-z]{43}$/);
    assert.equal(key.prefix, key.plaintext.slice(0, DISPLAY_PREFIX_LENGTH));
    assert.equal(key.hash, sha256Hex(key.plaintext));
    assert.notEqual(generateDeploymentKey().plaintext, key.plaintext);
  });

  it("compares hashes in constant time and rejects different lengths", () => {
    const a = sha256Hex("a");
    assert.equal(hashesEqual(a, sha256Hex("a")), true);
    assert.equal(hashesEqual(a, sha256Hex("b")), false);
    assert.equal(hashesEqual(a, a.slice(0, 10)), false);
  });
});
