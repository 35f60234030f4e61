#!/usr/bin/python3
"""Drives a Tablo server's Queue service through the official azure-storage-queue SDK
(12.6.0b1, Debian's python3-azure) and exits non-zero on any mismatch.

Usage: TABLO_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
AccountKey=...;QueueEndpoint=http://127.0.0.1:PORT/devstoreaccount1;' /usr/bin/python3 compat_queue.py

Without TABLO_CONNECTION_STRING it talks to the development account on 127.0.0.1:10001.
Each check prints PASS or FAIL; the last line counts them.
"""

import datetime
import os
import sys
import traceback
import urllib.error
import urllib.request
import uuid

from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.storage.queue import (
    AccessPolicy,
    CorsRule,
    QueueClient,
    QueueSasPermissions,
    QueueServiceClient,
    generate_queue_sas,
)

DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
DEV_CONNECTION_STRING = (
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + DEV_KEY + ";"
    "QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;"
)
CONN = os.environ.get("TABLO_CONNECTION_STRING") or DEV_CONNECTION_STRING
SVC = QueueServiceClient.from_connection_string(CONN, retry_total=0)
SUFFIX = uuid.uuid4().hex[:10]
PARTS = dict(p.split("=", 1) for p in CONN.split(";") if "=" in p)


class Mismatch(Exception):
    pass


def eq(got, want, what):
    if got != want:
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def expect_error(fn, exc, code, what):
    try:
        fn()
    except exc as e:
        eq(getattr(e, "error_code", None), code, what + " code")
        return
    raise Mismatch(f"{what}: no error, want {code}")


def new_queue(stem, metadata=None):
    q = SVC.get_queue_client(f"py-{stem}-{SUFFIX}")
    q.create_queue(metadata=metadata)
    return q


def create_and_metadata():
    q = new_queue("create", {"Purpose": "compat"})
    # Python raises ResourceExistsError on 204 (queue exists with the same metadata) and on 409.
    expect_error(lambda: q.create_queue(metadata={"Purpose": "compat"}), ResourceExistsError, "QueueAlreadyExists", "create again")
    expect_error(lambda: q.create_queue(metadata={"Purpose": "other"}), ResourceExistsError, "QueueAlreadyExists", "create with other metadata")
    props = q.get_queue_properties()
    eq(props.metadata, {"Purpose": "compat"}, "metadata keeps its case")
    eq(props.approximate_message_count, 0, "count")
    q.set_queue_metadata({"k": "v"})
    eq(q.get_queue_properties().metadata, {"k": "v"}, "metadata replaced")
    q.delete_queue()
    expect_error(q.get_queue_properties, ResourceNotFoundError, "QueueNotFound", "deleted")


def messages():
    q = new_queue("msgs")
    text = 'hello <world> & "friends" ünïcödé'
    sent = q.send_message(text)
    eq(bool(sent.pop_receipt), True, "put receipt")
    peeked = q.peek_messages(max_messages=32)
    eq([m.content for m in peeked], [text], "peek")
    got = list(q.receive_messages(messages_per_page=5, visibility_timeout=60, max_messages=5))
    eq([m.content for m in got], [text], "receive")
    eq(got[0].dequeue_count, 1, "dequeue count")
    eq(list(q.receive_messages(max_messages=1)), [], "invisible after receive")
    upd = q.update_message(got[0].id, pop_receipt=got[0].pop_receipt, content="changed", visibility_timeout=0)
    if upd.pop_receipt == got[0].pop_receipt:
        raise Mismatch("update kept the pop receipt")
    expect_error(lambda: q.delete_message(got[0].id, got[0].pop_receipt), ResourceNotFoundError, "MessageNotFound", "stale receipt")
    eq([m.content for m in q.peek_messages()], ["changed"], "updated text")
    q.delete_message(got[0].id, upd.pop_receipt)
    for i in range(3):
        q.send_message(f"m{i}")
    eq([m.content for m in q.receive_messages(messages_per_page=32, max_messages=32)], ["m0", "m1", "m2"], "FIFO")
    q.clear_messages()
    eq(q.get_queue_properties().approximate_message_count, 0, "count after clear")
    forever = q.send_message("forever", time_to_live=-1)
    eq(forever.expires_on.year, 9999, "ttl -1")
    expect_error(lambda: q.send_message("x" * (64 * 1024 + 1)), HttpResponseError, "RequestBodyTooLarge", "too large")
    q.delete_queue()


def listing():
    made = [new_queue(f"list{n}", {"n": n}) for n in "abc"]
    names = []
    for page in SVC.list_queues(name_starts_with="py-list", include_metadata=True, results_per_page=2).by_page():
        for item in page:
            if item.name.endswith(SUFFIX):
                names.append(item.name)
                if not item.metadata.get("n"):
                    raise Mismatch(f"no metadata for {item.name}")
    eq(names, [q.queue_name for q in made], "listed names")
    for q in made:
        q.delete_queue()


def service_properties():
    SVC.set_service_properties(cors=[CorsRule(["https://example.com"], ["GET", "PUT"], max_age_in_seconds=30)])
    props = SVC.get_service_properties()
    eq(len(props["cors"]), 1, "cors rules")
    SVC.set_service_properties(cors=[])


def sas():
    q = new_queue("sas")
    q.send_message("for sas")
    account, key = PARTS["AccountName"], PARTS["AccountKey"]
    expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    token = generate_queue_sas(account, q.queue_name, key, permission=QueueSasPermissions(read=True, process=True), expiry=expiry, protocol="https,http")
    via = QueueClient.from_queue_url(q.url, credential=token, retry_total=0)
    got = list(via.receive_messages(max_messages=1))
    eq(len(got), 1, "receive via SAS")
    via.delete_message(got[0])
    expect_error(lambda: via.send_message("no"), HttpResponseError, "AuthorizationPermissionMismatch", "put without a")
    q.set_queue_access_policy({"p1": AccessPolicy(permission=QueueSasPermissions(add=True), expiry=expiry)})
    eq(list(q.get_queue_access_policy().keys()), ["p1"], "stored policy")
    token = generate_queue_sas(account, q.queue_name, key, policy_id="p1", protocol="https,http")
    QueueClient.from_queue_url(q.url, credential=token, retry_total=0).send_message("via policy")
    # The SDK refuses to send an unauthenticated request itself; send one by hand.
    try:
        urllib.request.urlopen(q.url + "/messages?peekonly=true")
        raise Mismatch("anonymous peek succeeded")
    except urllib.error.HTTPError as e:
        eq((e.code, e.headers.get("x-ms-error-code")), (403, "AuthenticationFailed"), "anonymous")
    q.delete_queue()


CHECKS = [
    ("create, metadata, delete", create_and_metadata),
    ("send, receive, peek, update, delete, clear", messages),
    ("list queues with prefix, paging and metadata", listing),
    ("service properties", service_properties),
    ("service SAS and stored access policy", sas),
]

passed = failed = 0
for name, fn in CHECKS:
    try:
        fn()
        passed += 1
        print(f"PASS {name}")
    except Exception:
        failed += 1
        print(f"FAIL {name}: {traceback.format_exc()}")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
