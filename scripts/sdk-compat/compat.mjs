// Drives a Tablo server through the official @azure/data-tables SDK (version pinned in
// package.json) and exits non-zero on any mismatch.
//
// Usage: npm ci && TABLO_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
// AccountKey=...;TableEndpoint=http://127.0.0.1:PORT/devstoreaccount1;' node compat.mjs
//
// Without TABLO_CONNECTION_STRING it talks to the development account on 127.0.0.1:10002.
// Each check prints PASS or FAIL; the last line counts them.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { TableClient, TableServiceClient, TableTransaction, odata } from "@azure/data-tables";

const DEV_CONNECTION_STRING =
  "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
  "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
  "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;";
const conn = process.env.TABLO_CONNECTION_STRING || DEV_CONNECTION_STRING;
const clientOptions = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
const svc = TableServiceClient.fromConnectionString(conn, clientOptions);
const suffix = randomUUID().replaceAll("-", "").slice(0, 10);
const created = [];

const SPECIAL_KEYS = [
  ["O'Brien", "it's ''twice''"],
  ["with space", "  leading and trailing  "],
  ["100% sure", "%20 not an escape %"],
  ["ünïcödé 中文", "Ωmega ß"],
  ["emoji 😀🎉", "row 🚀"],
  ["plus+amp&eq=", "semi;colon,comma:colon@at"],
  ["(parens)", "$dollar!bang*star"],
];

async function newTable(stem) {
  const name = `js${stem}${suffix}`;
  await svc.createTable(name);
  created.push(name);
  return TableClient.fromConnectionString(conn, name, clientOptions);
}

async function expectError(promise, status, code, what) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.statusCode, status, `${what}: status (${e.message})`);
    // Transaction errors carry the code on the error; other operations only in the parsed body.
    assert.equal(e.code ?? e.response?.parsedBody?.odataError?.code, code, `${what}: code`);
    return e;
  }
  assert.fail(`${what}: no error, want ${status} ${code}`);
}

/** Custom properties of an entity returned by the SDK (no keys or metadata). */
function props(e) {
  const { partitionKey, rowKey, etag, timestamp, "odata.metadata": _m, ...rest } = e;
  return rest;
}

async function collect(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

// ---- tables ----

async function createTable() {
  const name = `jscreate${suffix}`;
  let status;
  await svc.createTable(name, { onResponse: (r) => (status = r.status) });
  created.push(name);
  assert.ok(status === 201 || status === 204, `create table status ${status}`);
  // The SDK swallows exactly 409 TableAlreadyExists; anything else would throw.
  await svc.createTable(name, { onResponse: (r) => (status = r.status) });
  assert.equal(status, 409, "create existing table status");
  const client = TableClient.fromConnectionString(conn, name, clientOptions);
  await client.createTable();
}

async function listTables() {
  const stem = `jslist${suffix}`;
  const names = [0, 1, 2].map((i) => `${stem}${i}`);
  for (const n of names) {
    await svc.createTable(n);
    created.push(n);
  }
  const filter = odata`TableName ge ${stem} and TableName lt ${stem + "z"}`;
  const found = (await collect(svc.listTables({ queryOptions: { filter } }))).map((t) => t.name);
  assert.deepEqual(found, names, "listTables filter");
  const pages = [];
  for await (const page of svc.listTables({ queryOptions: { filter } }).byPage({ maxPageSize: 2 })) {
    pages.push(page.map((t) => t.name));
  }
  assert.deepEqual(pages, [names.slice(0, 2), names.slice(2)], "listTables pages of 2");
  await svc.deleteTable(names[2]);
  created.pop();
  const after = (await collect(svc.listTables({ queryOptions: { filter } }))).map((t) => t.name);
  assert.deepEqual(after, names.slice(0, 2), "deleted table still listed");
  await svc.deleteTable(names[2]); // the SDK swallows 404 on delete
}

// ---- single-entity operations ----

async function entityCrud() {
  const tc = await newTable("crud");
  const e = { partitionKey: "pk", rowKey: "rk", Name: "first", N: 1 };
  const ins = await tc.createEntity(e);
  assert.ok(ins.etag, "insert returns an etag");
  let got = await tc.getEntity("pk", "rk");
  assert.deepEqual(props(got), { Name: "first", N: 1 }, "get after insert");
  assert.equal(got.etag, ins.etag, "etag from get equals insert etag");
  assert.ok(typeof got.timestamp === "string" && got.timestamp.endsWith("Z"), `timestamp ${got.timestamp}`);
  await expectError(tc.createEntity(e), 409, "EntityAlreadyExists", "insert duplicate");
  await expectError(tc.getEntity("pk", "missing"), 404, "ResourceNotFound", "get missing");

  const rep = await tc.updateEntity({ partitionKey: "pk", rowKey: "rk", Other: "x" }, "Replace", { etag: ins.etag });
  assert.notEqual(rep.etag, ins.etag, "replace changes the etag");
  assert.deepEqual(props(await tc.getEntity("pk", "rk")), { Other: "x" }, "after replace with etag");
  await expectError(
    tc.updateEntity({ partitionKey: "pk", rowKey: "rk", A: 1 }, "Merge", { etag: ins.etag }),
    412, "UpdateConditionNotSatisfied", "merge with stale etag");
  const mer = await tc.updateEntity({ partitionKey: "pk", rowKey: "rk", Added: true }, "Merge", { etag: rep.etag });
  assert.deepEqual(props(await tc.getEntity("pk", "rk")), { Other: "x", Added: true }, "after merge with etag");

  await tc.updateEntity({ partitionKey: "pk", rowKey: "rk", Star: 1 }); // Merge, etag "*"
  assert.deepEqual(props(await tc.getEntity("pk", "rk")), { Other: "x", Added: true, Star: 1 }, "after merge *");
  await tc.updateEntity({ partitionKey: "pk", rowKey: "rk", Only: "this" }, "Replace", { etag: "*" });
  assert.deepEqual(props(await tc.getEntity("pk", "rk")), { Only: "this" }, "after replace *");
  await expectError(tc.updateEntity({ partitionKey: "pk", rowKey: "nope", A: 1 }), 404, "ResourceNotFound", "update missing");

  await tc.upsertEntity({ partitionKey: "pk", rowKey: "up", A: 1, B: "b" }, "Replace");
  assert.deepEqual(props(await tc.getEntity("pk", "up")), { A: 1, B: "b" }, "upsert replace (new)");
  await tc.upsertEntity({ partitionKey: "pk", rowKey: "up", C: 2.5 }, "Merge");
  assert.deepEqual(props(await tc.getEntity("pk", "up")), { A: 1, B: "b", C: 2.5 }, "upsert merge (existing)");
  await tc.upsertEntity({ partitionKey: "pk", rowKey: "up", D: false }, "Replace");
  assert.deepEqual(props(await tc.getEntity("pk", "up")), { D: false }, "upsert replace (existing)");
  await tc.upsertEntity({ partitionKey: "pk", rowKey: "up2", E: "e" }); // default Merge
  assert.deepEqual(props(await tc.getEntity("pk", "up2")), { E: "e" }, "upsert merge (new)");

  const cur = (await tc.getEntity("pk", "rk")).etag;
  await expectError(tc.deleteEntity("pk", "rk", { etag: mer.etag }), 412, "UpdateConditionNotSatisfied", "delete with stale etag");
  await tc.deleteEntity("pk", "rk", { etag: cur });
  await expectError(tc.getEntity("pk", "rk"), 404, "ResourceNotFound", "get after delete");
  await tc.deleteEntity("pk", "up");
  await tc.deleteEntity("pk", "up2", { etag: "*" });
  await expectError(tc.deleteEntity("pk", "never-existed"), 404, "ResourceNotFound", "delete missing");
  assert.deepEqual(await collect(tc.listEntities()), [], "table empty after deletes");
}

async function getWithSelect() {
  const tc = await newTable("select");
  await tc.createEntity({ partitionKey: "p", rowKey: "r", A: 1, B: "two", C: 3.5 });
  const got = await tc.getEntity("p", "r", { queryOptions: { select: ["A", "C"] } });
  assert.deepEqual(props(got), { A: 1, C: 3.5 }, "getEntity select");
}

// ---- queries ----

async function queryFilterSelectTop() {
  const tc = await newTable("query");
  for (let start = 0; start < 40; start += 20) {
    const t = new TableTransaction();
    for (let i = start; i < start + 20; i++) {
      t.createEntity({ partitionKey: "q", rowKey: `r${String(i).padStart(3, "0")}`, N: i, Even: i % 2 === 0, Tag: `t${i % 3}` });
    }
    await tc.submitTransaction(t.actions);
  }
  let rows = await collect(tc.listEntities({ queryOptions: { filter: odata`N ge ${10} and Even eq ${true}` } }));
  assert.deepEqual(rows.map((r) => r.N), [10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38], "filter N ge 10 and Even");
  rows = await collect(tc.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"q"} and Tag eq ${"t1"}`, select: ["N"] } }));
  assert.deepEqual(rows.map(props), [...Array(40).keys()].filter((i) => i % 3 === 1).map((N) => ({ N })), "filter + select");
  const sizes = [];
  for await (const page of tc.listEntities({ queryOptions: { filter: "N lt 25" } }).byPage({ maxPageSize: 7 })) {
    sizes.push(page.length);
  }
  assert.deepEqual(sizes, [7, 7, 7, 4], "top=7 page sizes");
  rows = await collect(tc.listEntities({ queryOptions: { filter: "RowKey gt 'r035' or N eq 3" } }));
  assert.deepEqual(rows.map((r) => r.N), [3, 36, 37, 38, 39], "or filter");
  rows = await collect(tc.listEntities({ queryOptions: { filter: "not (N lt 38)" } }));
  assert.deepEqual(rows.map((r) => r.N), [38, 39], "not filter");
}

async function queryPagingOver1000() {
  const tc = await newTable("paging");
  const total = 1234;
  for (let start = 0; start < total; start += 100) {
    const t = new TableTransaction();
    for (let i = start; i < Math.min(start + 100, total); i++) {
      t.upsertEntity({ partitionKey: "big", rowKey: `r${String(i).padStart(5, "0")}`, N: i }, "Replace");
    }
    await tc.submitTransaction(t.actions);
  }
  const pages = [];
  for await (const page of tc.listEntities().byPage()) pages.push(page);
  assert.deepEqual(pages.map((p) => p.length), [1000, 234], "default page sizes over 1,234 entities");
  const keys = pages.flat().map((e) => e.rowKey);
  assert.deepEqual(keys, [...Array(total).keys()].map((i) => `r${String(i).padStart(5, "0")}`), "paged keys in order");
  const iter = tc.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"big"}` } }).byPage({ maxPageSize: 500 });
  const first = (await iter.next()).value;
  assert.equal(first.length, 500, "first page of 500");
  assert.ok(first.continuationToken, "continuation token after the first page");
  let rest = 0;
  let firstOfRest;
  for await (const page of tc
    .listEntities({ queryOptions: { filter: odata`PartitionKey eq ${"big"}` } })
    .byPage({ maxPageSize: 500, continuationToken: first.continuationToken })) {
    firstOfRest ??= page[0];
    rest += page.length;
  }
  assert.equal(500 + rest, total, "resume from continuation token");
  assert.equal(firstOfRest.N, 500, "first entity after the continuation token");
}

// ---- transactions ----

async function transactionEveryOp() {
  const tc = await newTable("batch");
  for (let i = 0; i < 6; i++) await tc.createEntity({ partitionKey: "b", rowKey: `e${i}`, V: i, Keep: "k" });
  const etag1 = (await tc.getEntity("b", "e1")).etag;
  const etag4 = (await tc.getEntity("b", "e4")).etag;
  const t = new TableTransaction();
  t.createEntity({ partitionKey: "b", rowKey: "new", V: 100 });
  t.updateEntity({ partitionKey: "b", rowKey: "e1", V: 11 }, "Merge", { etag: etag1 });
  t.updateEntity({ partitionKey: "b", rowKey: "e2", V: 12 }, "Replace");
  t.upsertEntity({ partitionKey: "b", rowKey: "e3", V: 13 }, "Merge");
  t.upsertEntity({ partitionKey: "b", rowKey: "e5", V: 15 }, "Replace");
  t.upsertEntity({ partitionKey: "b", rowKey: "ups", V: 101 }, "Replace");
  t.deleteEntity("b", "e4", { etag: etag4 });
  t.deleteEntity("b", "e0");
  const res = await tc.submitTransaction(t.actions);
  assert.equal(res.status, 202, "transaction status");
  assert.equal(res.subResponses.length, t.actions.length, "sub-response count");
  assert.ok([201, 204].includes(res.subResponses[0].status), "insert sub-response status");
  assert.deepEqual(res.subResponses.slice(1).map((s) => s.status), Array(7).fill(204), "other sub-response statuses");
  const got = Object.fromEntries((await collect(tc.listEntities())).map((e) => [e.rowKey, props(e)]));
  assert.deepEqual(got, {
    new: { V: 100 },
    e1: { V: 11, Keep: "k" },
    e2: { V: 12 },
    e3: { V: 13, Keep: "k" },
    e5: { V: 15 },
    ups: { V: 101 },
  }, "state after transaction");
  const etagNew = res.getResponseForEntity("new")?.etag?.trim();
  assert.equal((await tc.getEntity("b", "new")).etag, etagNew, "transaction insert etag");
}

async function transactionFailure() {
  const tc = await newTable("batchfail");
  await tc.createEntity({ partitionKey: "f", rowKey: "exists", V: 1 });
  let t = new TableTransaction();
  t.createEntity({ partitionKey: "f", rowKey: "a", V: 1 });
  t.upsertEntity({ partitionKey: "f", rowKey: "b", V: 2 });
  t.createEntity({ partitionKey: "f", rowKey: "exists", V: 3 });
  t.updateEntity({ partitionKey: "f", rowKey: "missing", V: 4 });
  const err = await expectError(tc.submitTransaction(t.actions), 409, "EntityAlreadyExists", "duplicate insert in a transaction");
  assert.match(err.message, /^2:/, "failed operation index in the message");
  let rows = await collect(tc.listEntities());
  assert.deepEqual(rows.map((e) => [e.rowKey, props(e)]), [["exists", { V: 1 }]], "nothing applied after a failed transaction");

  const etag = (await tc.getEntity("f", "exists")).etag;
  await tc.updateEntity({ partitionKey: "f", rowKey: "exists", V: 5 });
  t = new TableTransaction();
  t.upsertEntity({ partitionKey: "f", rowKey: "c", V: 1 });
  t.updateEntity({ partitionKey: "f", rowKey: "exists", V: 6 }, "Merge", { etag });
  const stale = await expectError(tc.submitTransaction(t.actions), 412, "UpdateConditionNotSatisfied", "stale etag in a transaction");
  assert.match(stale.message, /^1:/, "stale etag index in the message");

  // Two partitions in one transaction: this SDK refuses client-side. A row twice goes out.
  await expectError(tc.submitTransaction([
    ["upsert", { partitionKey: "f", rowKey: "x" }],
    ["delete", { partitionKey: "f", rowKey: "x" }],
  ]), 400, "InvalidDuplicateRow", "same row twice");
  rows = await collect(tc.listEntities());
  assert.deepEqual(rows.map((e) => e.rowKey), ["exists"], "nothing applied after failures");
}

// ---- types and keys ----

async function typeRoundTrip() {
  const tc = await newTable("types");
  const guid = "c9da6455-213d-42c9-9a79-3e9149a57833";
  const date = new Date("2024-05-01T10:20:30.123Z");
  const e = {
    partitionKey: "t", rowKey: "all",
    Str: "héllo ☃ 😀 \"quoted\" \\ / \n\t", Empty: "",
    I32: 2147483647, I32Min: -2147483648, I32Typed: { value: 7, type: "Int32" },
    I64Max: 9223372036854775807n, I64Min: -9223372036854775808n,
    I64Obj: { value: "1099511627776", type: "Int64" },
    Dbl: 1.5, DblWhole: { value: "3", type: "Double" }, DblTiny: 5e-324, DblHuge: 1.7976931348623157e308,
    DblNeg: -0.1, DblStr: { value: "1.23456789012346e+24", type: "Double" },
    Nan: { value: "NaN", type: "Double" }, Inf: { value: "Infinity", type: "Double" }, NegInf: { value: "-Infinity", type: "Double" },
    True: true, False: false,
    Date: date, DateTicks: { value: "2024-05-01T10:20:30.1234567Z", type: "DateTime" },
    DateMin: { value: "1601-01-01T00:00:00Z", type: "DateTime" },
    DateMax: { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" },
    Bin: new Uint8Array([0, 1, 2, 254, 255]), BinObj: { value: "YWJj", type: "Binary" },
    Guid: { value: guid, type: "Guid" },
  };
  await tc.createEntity(e);
  for (const got of [await tc.getEntity("t", "all"), (await collect(tc.listEntities()))[0]]) {
    assert.equal(got.Str, e.Str, "String");
    assert.equal(got.Empty, "", "empty String");
    assert.equal(got.I32, 2147483647, "Int32 max");
    assert.equal(got.I32Min, -2147483648, "Int32 min");
    assert.equal(got.I32Typed, 7, "typed Int32");
    assert.equal(got.I64Max, 9223372036854775807n, "Int64 max");
    assert.equal(got.I64Min, -9223372036854775808n, "Int64 min");
    assert.equal(got.I64Obj, 1099511627776n, "Int64 object");
    assert.equal(got.Dbl, 1.5, "Double");
    assert.equal(got.DblWhole, 3, "whole Double");
    assert.equal(got.DblTiny, 5e-324, "Double subnormal");
    assert.equal(got.DblHuge, 1.7976931348623157e308, "Double max");
    assert.equal(got.DblNeg, -0.1, "negative Double");
    assert.equal(got.DblStr, 1.23456789012346e24, "Double sent as a string");
    assert.equal(got.Nan, "NaN", "NaN (the SDK hands back the annotated string)");
    assert.equal(got.Inf, "Infinity", "Infinity");
    assert.equal(got.NegInf, "-Infinity", "-Infinity");
    assert.equal(got.True, true, "true");
    assert.equal(got.False, false, "false");
    assert.equal(got.Date.toISOString(), date.toISOString(), "DateTime");
    assert.equal(got.DateTicks.toISOString(), "2024-05-01T10:20:30.123Z", "DateTime ticks (ms in JS)");
    assert.equal(got.DateMin.toISOString(), "1601-01-01T00:00:00.000Z", "DateTime min");
    assert.deepEqual([...got.Bin], [...e.Bin], "Binary");
    assert.deepEqual([...got.BinObj], [97, 98, 99], "Binary object");
    assert.deepEqual(got.Guid, { value: guid, type: "Guid" }, "Guid");
  }
  // Without type conversion the wire values come back verbatim.
  const raw = await tc.getEntity("t", "all", { disableTypeConversion: true });
  assert.deepEqual(raw.DateTicks, { value: "2024-05-01T10:20:30.1234567Z", type: "DateTime" }, "DateTime ticks on the wire");
  assert.deepEqual(raw.DateMax, { value: "9999-12-31T23:59:59.9999999Z", type: "DateTime" }, "DateTime max on the wire");
  assert.deepEqual(raw.I64Max, { value: "9223372036854775807", type: "Int64" }, "Int64 on the wire");
  // (JSON.parse turns 3.0 into 3, so this SDK cannot tell a whole Double from an Int32.)
  assert.deepEqual(raw.I32, { value: "2147483647", type: "Int32" }, "Int32 inferred");
  // Query by typed literals.
  const rows = await collect(tc.listEntities({
    queryOptions: { filter: odata`I64Max eq 9223372036854775807L and Guid eq guid'${guid}' and Date eq ${date} and Bin eq X'000102feff'` },
  }));
  assert.deepEqual(rows.map((r) => r.rowKey), ["all"], "query by Int64, Guid, DateTime, Binary literals");
}

async function specialKeys() {
  const tc = await newTable("keys");
  for (const [pk, rk] of SPECIAL_KEYS) {
    await tc.createEntity({ partitionKey: pk, rowKey: rk, V: 1 });
    const got = await tc.getEntity(pk, rk);
    assert.deepEqual([got.partitionKey, got.rowKey, got.V], [pk, rk, 1], `get ${pk}/${rk}`);
    await tc.updateEntity({ partitionKey: pk, rowKey: rk, W: 2 }, "Merge", { etag: got.etag });
    const rows = await collect(tc.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${pk} and RowKey eq ${rk}` } }));
    assert.deepEqual(rows.map(props), [{ V: 1, W: 2 }], `query ${pk}/${rk}`);
  }
  const pk = SPECIAL_KEYS[0][0];
  const up = new TableTransaction();
  for (const [, rk] of SPECIAL_KEYS) up.upsertEntity({ partitionKey: pk, rowKey: rk, B: true });
  await tc.submitTransaction(up.actions);
  const inPk = await collect(tc.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${pk}` } }));
  assert.equal(inPk.length, SPECIAL_KEYS.length, "transaction with special row keys");
  const del = new TableTransaction();
  for (const [, rk] of SPECIAL_KEYS) del.deleteEntity(pk, rk);
  await tc.submitTransaction(del.actions);
  for (const [pk2, rk] of SPECIAL_KEYS.slice(1)) {
    await tc.deleteEntity(pk2, rk);
    await expectError(tc.getEntity(pk2, rk), 404, "ResourceNotFound", `get ${pk2}/${rk} after delete`);
  }
  assert.deepEqual(await collect(tc.listEntities()), [], "no entities left");
}

async function deletedTable() {
  const name = `jsgone${suffix}`;
  await svc.createTable(name);
  const tc = TableClient.fromConnectionString(conn, name, clientOptions);
  await tc.createEntity({ partitionKey: "p", rowKey: "r" });
  await tc.deleteTable();
  await expectError(tc.getEntity("p", "r"), 404, "TableNotFound", "get from a deleted table");
  await expectError(tc.createEntity({ partitionKey: "p", rowKey: "r" }), 404, "TableNotFound", "insert into a deleted table");
}

const checks = [
  ["createTable (201/204), existing table (409 swallowed)", createTable],
  ["listTables (filter, paging), deleteTable", listTables],
  ["insert, get, update replace/merge with etag and *, upsert, delete", entityCrud],
  ["getEntity with select", getWithSelect],
  ["query filter/select/top", queryFilterSelectTop],
  ["query paging over 1,000 entities", queryPagingOver1000],
  ["transaction with every operation kind", transactionEveryOp],
  ["failing transactions are atomic", transactionFailure],
  ["type round-trips", typeRoundTrip],
  ["special keys", specialKeys],
  ["operations on a deleted table", deletedTable],
];

const began = Date.now();
let passed = 0;
let failed = 0;
for (const [name, fn] of checks) {
  try {
    await fn();
    passed++;
    console.log(`PASS ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.stack ?? e}`);
  }
}
for (const name of created) {
  try {
    await svc.deleteTable(name);
  } catch (e) {
    console.log(`cleanup ${name}: ${e.message}`);
  }
}
console.log(`js sdk-compat (@azure/data-tables): ${passed} checks passed, ${failed} failed in ${((Date.now() - began) / 1000).toFixed(1)}s`);
process.exitCode = failed === 0 ? 0 : 1;
