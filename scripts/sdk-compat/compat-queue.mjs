// Drives a Tablo server's Queue service through the official @azure/storage-queue SDK
// (version pinned in package.json) and exits non-zero on any mismatch.
//
// Usage: npm ci && TABLO_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
// AccountKey=...;QueueEndpoint=http://127.0.0.1:PORT/devstoreaccount1;' node compat-queue.mjs
//
// Without TABLO_CONNECTION_STRING it talks to the development account on 127.0.0.1:10001.
// Each check prints PASS or FAIL; the last line counts them.

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  QueueServiceClient,
  QueueSASPermissions,
  StorageSharedKeyCredential,
  generateQueueSASQueryParameters,
  QueueClient,
} from "@azure/storage-queue";

const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const DEV_CONNECTION_STRING =
  "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + DEV_KEY + ";" +
  "QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;";
const conn = process.env.TABLO_CONNECTION_STRING || DEV_CONNECTION_STRING;
const options = { retryOptions: { maxTries: 1 } };
const svc = QueueServiceClient.fromConnectionString(conn, options);
const suffix = randomUUID().replaceAll("-", "").slice(0, 10);

let passed = 0;
let failed = 0;
async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`PASS ${name}`);
  } catch (e) {
    failed++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}

async function expectError(promise, status, code, what) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.statusCode, status, `${what}: status (${e.message})`);
    assert.equal(e.code, code, `${what}: code`);
    return;
  }
  assert.fail(`${what}: no error, want ${status} ${code}`);
}

async function newQueue(stem, metadata) {
  const q = svc.getQueueClient(`js-${stem}-${suffix}`);
  await q.create({ metadata });
  return q;
}

await check("create, createIfNotExists, metadata, delete", async () => {
  const q = await newQueue("create", { owner: "js" });
  const again = await q.createIfNotExists({ metadata: { owner: "js" } });
  assert.equal(again.succeeded, false, "createIfNotExists on an existing queue");
  await expectError(q.create({ metadata: { owner: "other" } }), 409, "QueueAlreadyExists", "create with other metadata");
  await q.setMetadata({ purpose: "compat" });
  const props = await q.getProperties();
  assert.deepEqual(props.metadata, { purpose: "compat" });
  assert.equal(props.approximateMessagesCount, 0);
  await q.delete();
  const gone = await q.deleteIfExists();
  assert.equal(gone.succeeded, false);
  await expectError(q.getProperties(), 404, "QueueNotFound", "properties of a deleted queue");
});

await check("send, receive, peek, update, delete, clear", async () => {
  const q = await newQueue("msgs");
  const text = 'hello <world> & "friends" ünïcödé';
  const sent = await q.sendMessage(text);
  assert.ok(sent.messageId && sent.popReceipt);
  const peeked = await q.peekMessages({ numberOfMessages: 32 });
  assert.equal(peeked.peekedMessageItems.length, 1);
  assert.equal(peeked.peekedMessageItems[0].messageText, text);
  const got = await q.receiveMessages({ numberOfMessages: 5, visibilityTimeout: 60 });
  assert.equal(got.receivedMessageItems.length, 1);
  const m = got.receivedMessageItems[0];
  assert.equal(m.messageText, text);
  assert.equal(m.dequeueCount, 1);
  assert.equal((await q.receiveMessages()).receivedMessageItems.length, 0, "invisible after receive");
  const upd = await q.updateMessage(m.messageId, m.popReceipt, undefined, 0);
  assert.notEqual(upd.popReceipt, m.popReceipt);
  await expectError(q.deleteMessage(m.messageId, m.popReceipt), 404, "MessageNotFound", "delete with a stale receipt");
  const again = await q.peekMessages();
  assert.equal(again.peekedMessageItems[0].messageText, text, "an update without text keeps it");
  const upd2 = await q.updateMessage(m.messageId, upd.popReceipt, "changed", 0);
  assert.equal((await q.peekMessages()).peekedMessageItems[0].messageText, "changed");
  await q.deleteMessage(m.messageId, upd2.popReceipt);
  for (let i = 0; i < 3; i++) await q.sendMessage(`m${i}`);
  const three = await q.receiveMessages({ numberOfMessages: 32 });
  assert.deepEqual(three.receivedMessageItems.map((x) => x.messageText), ["m0", "m1", "m2"]);
  await q.clearMessages();
  assert.equal((await q.getProperties()).approximateMessagesCount, 0);
  const forever = await q.sendMessage("forever", { messageTimeToLive: -1 });
  assert.equal(forever.expiresOn.getUTCFullYear(), 9999);
  await expectError(q.sendMessage("x".repeat(64 * 1024 + 1)), 413, "RequestBodyTooLarge", "too large");
  await q.delete();
});

await check("list queues with prefix, paging and metadata", async () => {
  const made = [];
  for (const n of ["a", "b", "c"]) made.push(await newQueue(`list${n}`, { n }));
  const names = [];
  for await (const page of svc.listQueues({ prefix: `js-list`, includeMetadata: true }).byPage({ maxPageSize: 2 })) {
    for (const item of page.queueItems || []) {
      if (item.name.endsWith(suffix)) {
        names.push(item.name);
        assert.ok(item.metadata && item.metadata.n, "metadata listed");
      }
    }
  }
  assert.deepEqual(names, made.map((q) => q.name));
  for (const q of made) await q.delete();
});

await check("service properties and CORS", async () => {
  await svc.setProperties({
    cors: [{ allowedOrigins: "https://example.com", allowedMethods: "GET,PUT", allowedHeaders: "*", exposedHeaders: "*", maxAgeInSeconds: 30 }],
  });
  const p = await svc.getProperties();
  assert.equal(p.cors.length, 1);
  assert.equal(p.cors[0].allowedOrigins, "https://example.com");
  await svc.setProperties({ cors: [] });
});

await check("service SAS and stored access policy", async () => {
  const q = await newQueue("sas");
  await q.sendMessage("for sas");
  const account = conn.match(/AccountName=([^;]+)/)[1];
  const key = conn.match(/AccountKey=([^;]+)/)[1];
  const cred = new StorageSharedKeyCredential(account, key);
  const sas = generateQueueSASQueryParameters(
    { queueName: q.name, permissions: QueueSASPermissions.parse("rp"), expiresOn: new Date(Date.now() + 3600e3), protocol: "https,http" },
    cred,
  ).toString();
  const viaSas = new QueueClient(`${q.url}?${sas}`, undefined, options);
  const got = await viaSas.receiveMessages();
  assert.equal(got.receivedMessageItems.length, 1);
  await viaSas.deleteMessage(got.receivedMessageItems[0].messageId, got.receivedMessageItems[0].popReceipt);
  await expectError(viaSas.sendMessage("no"), 403, "AuthorizationPermissionMismatch", "put without a");
  await q.setAccessPolicy([{ id: "p1", accessPolicy: { permissions: "a", expiresOn: new Date(Date.now() + 3600e3) } }]);
  const acl = await q.getAccessPolicy();
  assert.equal(acl.signedIdentifiers[0].accessPolicy.permissions, "a");
  const si = generateQueueSASQueryParameters({ queueName: q.name, identifier: "p1", protocol: "https,http" }, cred).toString();
  await new QueueClient(`${q.url}?${si}`, undefined, options).sendMessage("via policy");
  const anon = new QueueClient(q.url, undefined, options);
  await expectError(anon.peekMessages(), 403, "AuthenticationFailed", "anonymous");
  await q.delete();
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
