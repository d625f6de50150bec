/** The kept prepared statements under Kysely's SQLite dialect (cloud/store/statementCache.ts). */
import assert from "node:assert/strict";
import SQLite from "better-sqlite3";
import { withStatementCache } from "../../../cloud/store/statementCache.js";

describe("SQLite statement cache", () => {
  it("prepares a statement once per SQL text and reuses it", () => {
    const db = new SQLite(":memory:");
    const cached = withStatementCache(db);
    db.exec("create table t (x integer)");
    const insert = cached.prepare("insert into t (x) values (?)");
    assert.equal(cached.prepare("insert into t (x) values (?)"), insert);
    insert.run(1);
    cached.prepare("insert into t (x) values (?)").run(2);
    assert.deepEqual(cached.prepare("select x from t order by x").all(), [{ x: 1 }, { x: 2 }]);
    cached.close();
  });

  it("keeps working across a schema change (SQLite prepares a kept statement again by itself)", () => {
    const db = new SQLite(":memory:");
    const cached = withStatementCache(db);
    db.exec("create table t (x integer)");
    const select = cached.prepare("select * from t");
    assert.deepEqual(select.all(), []);
    db.exec("alter table t add column y text default 'new'");
    cached.prepare("insert into t (x) values (?)").run(7);
    assert.deepEqual(cached.prepare("select * from t").all(), [{ x: 7, y: "new" }]);
    cached.close();
  });

  it("keeps at most 500 statements, dropping the least recently used", () => {
    const db = new SQLite(":memory:");
    const cached = withStatementCache(db);
    const first = cached.prepare("select 0");
    const second = cached.prepare("select 1");
    for (let i = 2; i < 500; i++) cached.prepare(`select ${i}`);
    assert.equal(cached.prepare("select 0"), first, "still kept at 500, and now the most recent");
    cached.prepare("select 500"); // one over: the least recently used ("select 1") goes
    assert.equal(cached.prepare("select 0"), first);
    assert.notEqual(cached.prepare("select 1"), second);
    cached.close();
  });
});
