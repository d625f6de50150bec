import assert from "node:assert/strict";
import { ApiError, AuthenticationError, ConflictError, InternalServerError, NotFoundError, RateLimitError } from "../../../sdk/errors.js";

describe("ApiError.from", () => {
  it("keeps the upstream status, code, message and request id", () => {
    const err = ApiError.from(409, { error: { code: "slug_taken", message: "taken", requestId: "req-1" } }, "fallback");
    assert.ok(err instanceof ConflictError);
    assert.deepEqual([err.status, err.code, err.message, err.requestId, err.name], [409, "slug_taken", "taken", "req-1", "ConflictError"]);
  });

  it("picks the subclass from the status, with a readable fallback for bodies that are not envelopes", () => {
    assert.ok(ApiError.from(401, null, "x") instanceof AuthenticationError);
    assert.ok(ApiError.from(404, null, "x") instanceof NotFoundError);
    assert.ok(ApiError.from(429, null, "x") instanceof RateLimitError);
    assert.ok(ApiError.from(503, null, "x") instanceof InternalServerError);
    const plain = ApiError.from(418, "teapot", "GET / failed with HTTP 418");
    assert.equal(plain.constructor, ApiError);
    assert.equal(plain.code, "http_418");
    assert.equal(plain.message, "GET / failed with HTTP 418");
  });
});
