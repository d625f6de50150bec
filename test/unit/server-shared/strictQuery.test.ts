import assert from "node:assert/strict";
import * as T from "@sinclair/typebox/type";
import { parseQueryStrictly } from "../../../server-shared/strictQuery.js";

describe("query strings: a declared number or boolean is read from its canonical spelling only", () => {
  const schema = T.Object({ step: T.Optional(T.Integer()), rate: T.Optional(T.Number()), on: T.Optional(T.Boolean()), name: T.Optional(T.String()) });
  const read = (query: Record<string, unknown>) => parseQueryStrictly(schema, query) as Record<string, unknown>;

  it("reads canonical spellings", () => {
    assert.deepEqual(read({ step: "0", rate: "0.25", on: "true", name: "12" }), { step: 0, rate: 0.25, on: true, name: "12" });
    assert.deepEqual(read({ step: "-3", rate: "-2", on: "false" }), { step: -3, rate: -2, on: false });
  });

  it("leaves every other spelling a string, for validation to refuse", () => {
    for (const step of ["1.0", "01", " 1", "1 ", "1e0", "0x1", "+1", "", "-0.0", "1,2"]) assert.equal(read({ step }).step, step, step);
    for (const rate of ["0.50", ".5", "5.", "1e-3", "NaN", "Infinity"]) assert.equal(read({ rate }).rate, rate, rate);
    for (const on of ["1", "0", "yes", "TRUE", ""]) assert.equal(read({ on }).on, on, on);
    assert.deepEqual(read({ step: ["1", "2"] }).step, ["1", "2"], "a repeated parameter stays a list");
    assert.equal(read({ other: "5" }).other, "5", "an undeclared parameter is left alone");
  });
});
