// Drives a Tablo server's Blob service through the official @azure/storage-blob SDK (version
// pinned in package.json) and exits non-zero on any mismatch.
//
// Usage: npm ci && TABLO_BLOB_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
// AccountKey=...;BlobEndpoint=http://127.0.0.1:PORT/devstoreaccount1;' node compat-blob.mjs
//
// Without TABLO_BLOB_CONNECTION_STRING it talks to the development account on 127.0.0.1:10000.
// Each check prints PASS or FAIL; the last line counts them.

import assert from "node:assert/strict";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  BlobSASPermissions,
  BlobServiceClient,
  BlockBlobClient,
  ContainerClient,
  ContainerSASPermissions,
  StorageSharedKeyCredential,
  generateBlobSASQueryParameters,
} from "@azure/storage-blob";

const DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const DEV_CONNECTION_STRING =
  "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + DEV_KEY + ";" +
  "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;";
const conn = process.env.TABLO_BLOB_CONNECTION_STRING || DEV_CONNECTION_STRING;
const options = { retryOptions: { maxTries: 1 } };
const svc = BlobServiceClient.fromConnectionString(conn, options);
const account = conn.match(/AccountName=([^;]+)/)[1];
const cred = new StorageSharedKeyCredential(account, conn.match(/AccountKey=([^;]+)/)[1]);
const suffix = randomUUID().replaceAll("-", "").slice(0, 10);
const tmp = mkdtempSync(join(tmpdir(), "tablo-blob-js-"));
const MiB = 1 << 20;

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
    if (code) assert.equal(e.code, code, `${what}: code`);
    return e;
  }
  assert.fail(`${what}: no error, want ${status} ${code}`);
}

async function newContainer(stem, opts) {
  const c = svc.getContainerClient(`js-${stem}-${suffix}`);
  await c.create(opts);
  return c;
}

const md5 = (buf) => createHash("md5").update(buf).digest();

await check("containers: create, exists, metadata, list, delete", async () => {
  const c = await newContainer("cont", { metadata: { owner: "js" } });
  const again = await c.createIfNotExists();
  assert.equal(again.succeeded, false, "createIfNotExists on an existing container");
  await expectError(c.create(), 409, "ContainerAlreadyExists", "create twice");
  assert.equal(await c.exists(), true);
  let props = await c.getProperties();
  assert.deepEqual(props.metadata, { owner: "js" });
  assert.ok(props.etag && props.lastModified, "etag and last-modified");
  assert.equal(props.leaseState, "available");
  await c.setMetadata({ purpose: "compat", n: "1" });
  props = await c.getProperties();
  assert.deepEqual(props.metadata, { purpose: "compat", n: "1" });
  const listed = [];
  for await (const item of svc.listContainers({ prefix: `js-cont-${suffix}`, includeMetadata: true })) listed.push(item);
  assert.equal(listed.length, 1);
  assert.equal(listed[0].name, c.containerName);
  assert.deepEqual(listed[0].metadata, { purpose: "compat", n: "1" });
  await c.delete();
  assert.equal(await c.exists(), false);
  assert.equal((await c.deleteIfExists()).succeeded, false);
  await expectError(c.getProperties(), 404, "ContainerNotFound", "properties of a deleted container");
});

await check("list containers paged by marker", async () => {
  const made = [];
  for (const n of ["a", "b", "c"]) made.push(await newContainer(`pg${n}`));
  const names = [];
  let pages = 0;
  for await (const page of svc.listContainers({ prefix: "js-pg" }).byPage({ maxPageSize: 2 })) {
    pages++;
    for (const item of page.containerItems) if (item.name.endsWith(suffix)) names.push(item.name);
  }
  assert.ok(pages >= 2, `pages: ${pages}`);
  assert.deepEqual(names, made.map((c) => c.containerName));
  for (const c of made) await c.delete();
});

await check("small blob: upload with headers and metadata, conditional overwrite, download", async () => {
  const c = await newContainer("small");
  const b = c.getBlockBlobClient("dir1/hello <&> ü.txt");
  const body = Buffer.from("hello, blob world\n");
  const up = await b.upload(body, body.length, {
    metadata: { Author: "js", a_b: "1" },
    blobHTTPHeaders: { blobContentType: "text/plain; charset=utf-8", blobCacheControl: "no-cache" },
  });
  assert.deepEqual(up.contentMD5 && Buffer.from(up.contentMD5), md5(body));
  await expectError(
    b.upload(Buffer.from("x"), 1, { conditions: { ifNoneMatch: "*" } }), 409, "BlobAlreadyExists", "if-none-match *");
  await expectError(
    b.upload(Buffer.from("x"), 1, { conditions: { ifMatch: '"0x1"' } }), 412, "ConditionNotMet", "stale if-match");
  const dl = await b.downloadToBuffer();
  assert.deepEqual(dl, body);
  const p = await b.getProperties();
  assert.equal(p.contentLength, body.length);
  assert.equal(p.contentType, "text/plain; charset=utf-8");
  assert.equal(p.cacheControl, "no-cache");
  assert.equal(p.blobType, "BlockBlob");
  assert.equal(p.accessTier, "Hot");
  assert.equal(p.accessTierInferred, true);
  assert.deepEqual(Buffer.from(p.contentMD5), md5(body));
  assert.deepEqual(p.metadata, { author: "js", a_b: "1" });
  const got = await b.download(7, 4);
  assert.equal(got.contentLength, 4);
  assert.equal(got.contentRange, `bytes 7-10/${body.length}`);
  assert.equal((await streamToBuffer(got.readableStreamBody)).toString(), "blob");
  const notModified = await b.download(0, undefined, { conditions: { ifNoneMatch: p.etag } }).catch((e) => e);
  assert.equal(notModified.statusCode, 304, "if-none-match with the current etag");
  await c.delete();
});

await check("properties and metadata: set HTTP headers clears the rest, set metadata, tier", async () => {
  const c = await newContainer("props");
  const b = c.getBlockBlobClient("p.bin");
  await b.upload(Buffer.from("abc"), 3, {
    blobHTTPHeaders: { blobContentType: "application/x-one", blobContentLanguage: "en", blobContentDisposition: "inline" },
  });
  const before = await b.getProperties();
  await b.setHTTPHeaders({ blobContentType: "application/x-two", blobContentEncoding: "identity" });
  const p = await b.getProperties();
  assert.equal(p.contentType, "application/x-two");
  assert.equal(p.contentEncoding, "identity");
  assert.equal(p.contentLanguage, undefined, "language cleared");
  assert.equal(p.contentDisposition, undefined, "disposition cleared");
  assert.equal(p.contentMD5, undefined, "MD5 cleared");
  assert.notEqual(p.etag, before.etag);
  await b.setMetadata({ k1: "v1", k2: "v 2" });
  assert.deepEqual((await b.getProperties()).metadata, { k1: "v1", k2: "v 2" });
  await b.setMetadata();
  assert.deepEqual((await b.getProperties()).metadata, {});
  await b.setAccessTier("Cool");
  const cool = await b.getProperties();
  assert.equal(cool.accessTier, "Cool");
  assert.equal(cool.accessTierInferred, undefined);
  await expectError(c.getBlockBlobClient("missing").getProperties(), 404, undefined, "HEAD of a missing blob");
  await expectError(c.getBlockBlobClient("missing").download(), 404, "BlobNotFound", "GET of a missing blob");
  await c.delete();
});

await check("large upload in blocks (uploadData, uploadFile) and parallel ranged download", async () => {
  const c = await newContainer("large");
  const data = randomBytes(9 * MiB + 12345);
  const b = c.getBlockBlobClient("big/data.bin");
  // Below maxSingleShotSize the SDK uses one Put Blob; above it, Put Block + Put Block List.
  await b.uploadData(data, { blockSize: 2 * MiB, concurrency: 4, maxSingleShotSize: MiB });
  const list = await b.getBlockList("all");
  assert.equal(list.committedBlocks.length, 5, "committed blocks");
  assert.equal(list.uncommittedBlocks.length, 0);
  assert.equal((await b.getProperties()).contentLength, data.length);
  const back = await b.downloadToBuffer(0, undefined, { blockSize: 3 * MiB, concurrency: 4 });
  assert.ok(back.equals(data), "downloadToBuffer bytes equal");
  const src = join(tmp, "up.bin");
  writeFileSync(src, data.subarray(0, 5 * MiB));
  const f = c.getBlockBlobClient("big/file.bin");
  await f.uploadFile(src, { blockSize: MiB, concurrency: 3, maxSingleShotSize: MiB });
  assert.equal((await f.getBlockList("committed")).committedBlocks.length, 5);
  const dst = join(tmp, "down.bin");
  await f.downloadToFile(dst);
  assert.ok(readFileSync(dst).equals(data.subarray(0, 5 * MiB)), "downloadToFile bytes equal");
  await c.delete();
});

await check("staged blocks: stageBlock, uncommitted list, commit a subset", async () => {
  const c = await newContainer("blocks");
  const b = c.getBlockBlobClient("staged");
  const id = (n) => Buffer.from(`block-${String(n).padStart(4, "0")}`).toString("base64");
  await b.stageBlock(id(1), Buffer.from("one-"), 4);
  await b.stageBlock(id(2), Buffer.from("two-"), 4);
  await b.stageBlock(id(3), Buffer.from("three"), 5);
  const unc = await b.getBlockList("uncommitted");
  assert.deepEqual(unc.uncommittedBlocks.map((x) => x.name), [id(1), id(2), id(3)]);
  await b.commitBlockList([id(3), id(1)]);
  assert.equal((await b.downloadToBuffer()).toString(), "threeone-");
  const all = await b.getBlockList("all");
  assert.equal(all.uncommittedBlocks.length, 0, "uncommitted blocks discarded on commit");
  await expectError(b.commitBlockList([id(2)]), 400, "InvalidBlockList", "commit a discarded block");
  await c.delete();
});

await check("hierarchical listing with delimiter and paging", async () => {
  const c = await newContainer("tree");
  for (const n of ["a.txt", "d1/x.txt", "d1/y.txt", "d1/sub/z.txt", "d2/w.txt", "e.txt"]) {
    await c.getBlockBlobClient(n).upload(Buffer.from(n), n.length, { metadata: { n: "1" } });
  }
  const top = { prefixes: [], blobs: [] };
  for await (const page of c.listBlobsByHierarchy("/").byPage({ maxPageSize: 2 })) {
    top.prefixes.push(...(page.segment.blobPrefixes || []).map((p) => p.name));
    top.blobs.push(...page.segment.blobItems.map((b) => b.name));
  }
  assert.deepEqual(top.prefixes, ["d1/", "d2/"]);
  assert.deepEqual(top.blobs, ["a.txt", "e.txt"]);
  const d1 = { prefixes: [], blobs: [] };
  for await (const item of c.listBlobsByHierarchy("/", { prefix: "d1/", includeMetadata: true })) {
    if (item.kind === "prefix") d1.prefixes.push(item.name);
    else {
      d1.blobs.push(item.name);
      assert.deepEqual(item.metadata, { n: "1" });
    }
  }
  assert.deepEqual(d1, { prefixes: ["d1/sub/"], blobs: ["d1/x.txt", "d1/y.txt"] });
  const flat = [];
  for await (const item of c.listBlobsFlat()) flat.push(item.name);
  assert.deepEqual(flat, ["a.txt", "d1/sub/z.txt", "d1/x.txt", "d1/y.txt", "d2/w.txt", "e.txt"]);
  await c.delete();
});

await check("SAS: blob SAS read-only, container SAS list and write, anonymous refused", async () => {
  const c = await newContainer("sas");
  const b = c.getBlockBlobClient("dir/s.txt");
  await b.upload(Buffer.from("sas body"), 8);
  const expiresOn = new Date(Date.now() + 3600e3);
  const blobSas = generateBlobSASQueryParameters(
    { containerName: c.containerName, blobName: "dir/s.txt", permissions: BlobSASPermissions.parse("r"), expiresOn, protocol: "https,http" },
    cred,
  ).toString();
  const viaSas = new BlockBlobClient(`${b.url}?${blobSas}`, undefined, options);
  assert.equal((await viaSas.downloadToBuffer()).toString(), "sas body");
  assert.equal((await viaSas.getProperties()).contentLength, 8);
  await expectError(viaSas.upload(Buffer.from("no"), 2), 403, "AuthorizationPermissionMismatch", "write with an r SAS");
  const contSas = generateBlobSASQueryParameters(
    { containerName: c.containerName, permissions: ContainerSASPermissions.parse("rwl"), expiresOn, protocol: "https,http" },
    cred,
  ).toString();
  const cc = new ContainerClient(`${c.url}?${contSas}`, undefined, options);
  await cc.getBlockBlobClient("via-sas.txt").upload(Buffer.from("w"), 1);
  const names = [];
  for await (const item of cc.listBlobsFlat()) names.push(item.name);
  assert.deepEqual(names, ["dir/s.txt", "via-sas.txt"]);
  const url = b.generateSasUrl ? await b.generateSasUrl({ permissions: BlobSASPermissions.parse("r"), expiresOn }) : null;
  if (url) assert.equal((await new BlockBlobClient(url, undefined, options).downloadToBuffer()).toString(), "sas body");
  const anon = new BlockBlobClient(b.url, undefined, options);
  await expectError(anon.download(), 404, "ResourceNotFound", "anonymous read of a private container");
  const expired = generateBlobSASQueryParameters(
    { containerName: c.containerName, blobName: "dir/s.txt", permissions: BlobSASPermissions.parse("r"), startsOn: new Date(Date.now() - 7200e3), expiresOn: new Date(Date.now() - 3600e3) },
    cred,
  ).toString();
  await expectError(new BlockBlobClient(`${b.url}?${expired}`, undefined, options).download(), 403, "AuthenticationFailed", "expired SAS");
  await c.delete();
});

await check("public container: anonymous read and list", async () => {
  const c = await newContainer("pub", { access: "container" });
  await c.getBlockBlobClient("p.txt").upload(Buffer.from("public"), 6);
  const anon = new ContainerClient(c.url, undefined, options);
  assert.equal((await anon.getBlockBlobClient("p.txt").downloadToBuffer()).toString(), "public");
  const names = [];
  for await (const item of anon.listBlobsFlat()) names.push(item.name);
  assert.deepEqual(names, ["p.txt"]);
  await expectError(anon.getBlockBlobClient("q.txt").upload(Buffer.from("x"), 1), 404, undefined, "anonymous write");
  const acl = await c.getAccessPolicy();
  assert.equal(acl.blobPublicAccess, "container");
  await c.delete();
});

await check("leases, snapshot, copy, delete", async () => {
  const c = await newContainer("lease");
  const b = c.getBlockBlobClient("l.txt");
  await b.upload(Buffer.from("v1"), 2);
  const lease = b.getBlobLeaseClient();
  await lease.acquireLease(-1);
  assert.equal((await b.getProperties()).leaseState, "leased");
  await expectError(b.upload(Buffer.from("v2"), 2), 412, "LeaseIdMissing", "write without the lease");
  await b.upload(Buffer.from("v2"), 2, { conditions: { leaseId: lease.leaseId } });
  await expectError(b.delete(), 412, "LeaseIdMissing", "delete without the lease");
  await lease.releaseLease();
  const snap = await b.createSnapshot();
  await b.upload(Buffer.from("v3"), 2);
  assert.equal((await b.withSnapshot(snap.snapshot).downloadToBuffer()).toString(), "v2");
  const copy = c.getBlockBlobClient("copy.txt");
  const poller = await copy.beginCopyFromURL(b.url);
  const res = await poller.pollUntilDone();
  assert.equal(res.copyStatus, "success");
  assert.equal((await copy.downloadToBuffer()).toString(), "v3");
  await expectError(b.delete(), 409, "SnapshotsPresent", "delete a blob with snapshots");
  await b.delete({ deleteSnapshots: "include" });
  assert.equal(await b.exists(), false);
  await c.delete();
});

await check("append and page blobs", async () => {
  const c = await newContainer("kinds");
  const a = c.getAppendBlobClient("log.txt");
  await a.create();
  await a.appendBlock(Buffer.from("one\n"), 4);
  await a.appendBlock(Buffer.from("two\n"), 4, { conditions: { appendPosition: 4 } });
  await expectError(a.appendBlock(Buffer.from("x"), 1, { conditions: { appendPosition: 1 } }), 412, "AppendPositionConditionNotMet", "append position");
  assert.equal((await a.downloadToBuffer()).toString(), "one\ntwo\n");
  const p = c.getPageBlobClient("disk.vhd");
  await p.create(4096);
  await p.uploadPages(Buffer.alloc(512, 7), 512, 512);
  const ranges = await p.getPageRanges();
  // The SDK maps <Start>512</Start><End>1023</End> to offset 512, count End-Start.
  assert.deepEqual(ranges.pageRange.map((r) => [r.offset, r.count]), [[512, 511]]);
  const all = await p.downloadToBuffer();
  assert.equal(all.length, 4096);
  assert.equal(all[600], 7);
  assert.equal(all[0], 0);
  await c.delete();
});

await check("account information and service properties", async () => {
  const info = await svc.getAccountInfo();
  assert.ok(info.skuName && info.accountKind, "sku and kind");
  const props = await svc.getProperties();
  assert.ok(props.cors !== undefined || props.hourMetrics !== undefined, "service properties answered");
});

async function streamToBuffer(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

rmSync(tmp, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
