#!/usr/bin/python3
"""Drives a Tablo server through the official azure-storage-blob SDK (12.15.0b1, Debian's
python3-azure) and exits non-zero on any mismatch.

Usage: TABLO_BLOB_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
AccountKey=...;BlobEndpoint=http://127.0.0.1:PORT/devstoreaccount1;' /usr/bin/python3 compat_blob.py

Each check prints PASS or FAIL; the last line counts them.
"""

import datetime
import hashlib
import os
import sys
import traceback
import uuid

from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.storage.blob import (
    BlobServiceClient,
    BlobSasPermissions,
    BlobClient,
    ContentSettings,
    generate_blob_sas,
)

CONN = os.environ.get(
    "TABLO_BLOB_CONNECTION_STRING",
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
    "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"
    "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;",
)
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

passed, failed = 0, 0


def check(name, fn):
    global passed, failed
    try:
        fn()
        print("PASS " + name)
        passed += 1
    except Exception:
        print("FAIL " + name)
        traceback.print_exc()
        failed += 1


# Small single-put and block sizes force Put Block + Put Block List for a 3 MiB upload.
svc = BlobServiceClient.from_connection_string(CONN, max_single_put_size=1 << 20, max_block_size=1 << 20,
                                               max_chunk_get_size=1 << 20, max_single_get_size=1 << 20)
name = "py" + uuid.uuid4().hex[:12]
cont = svc.get_container_client(name)


def containers():
    cont.create_container(metadata={"owner": "python"})
    try:
        cont.create_container()
        raise AssertionError("second create succeeded")
    except ResourceExistsError:
        pass
    props = cont.get_container_properties()
    assert props.metadata == {"owner": "python"}, props.metadata
    assert any(c.name == name for c in svc.list_containers(name_starts_with=name, include_metadata=True))


def small_blobs():
    b = cont.get_blob_client("dir1/hello.txt")
    b.upload_blob(b"hello, blob world\n", content_settings=ContentSettings(content_type="text/plain"))
    try:
        b.upload_blob(b"again")  # overwrite=False sends If-None-Match: *
        raise AssertionError("overwrite without overwrite=True succeeded")
    except ResourceExistsError:
        pass
    assert b.download_blob().readall() == b"hello, blob world\n"
    p = b.get_blob_properties()
    assert p.content_settings.content_type == "text/plain"
    assert p.content_settings.content_md5 == hashlib.md5(b"hello, blob world\n").digest()
    e = cont.get_blob_client("empty")
    e.upload_blob(b"")
    assert e.download_blob().readall() == b""  # 416 on the ranged first GET, then a plain GET
    assert b.exists() and not cont.get_blob_client("nope").exists()


def big_blob():
    data = os.urandom(3 << 20 | 12345)
    b = cont.get_blob_client("big.bin")
    b.upload_blob(data, max_concurrency=4)
    blocks, _ = b.get_block_list("all")
    assert len(blocks) == 4, len(blocks)
    assert b.download_blob(max_concurrency=4).readall() == data
    assert b.download_blob(offset=1000, length=2 << 20).readall() == data[1000:1000 + (2 << 20)]


def changed_mid_download():
    b = cont.get_blob_client("changing.bin")
    b.upload_blob(os.urandom(3 << 20), overwrite=True)
    stream = b.download_blob()  # first chunk only
    b.upload_blob(os.urandom(3 << 20), overwrite=True)
    try:
        stream.readall()
        raise AssertionError("a download across an overwrite succeeded")
    except ResourceModifiedError:
        pass


def listing():
    for n in ["a", "dir1/x", "dir1/sub/y", "dir2/z"]:
        cont.get_blob_client(n).upload_blob(n.encode(), overwrite=True)
    flat = [b.name for b in cont.list_blobs(results_per_page=2)]
    assert flat == sorted(flat) and "dir1/sub/y" in flat, flat
    top = sorted(b.name for b in cont.walk_blobs(delimiter="/"))
    assert top == ["a", "big.bin", "changing.bin", "dir1/", "dir2/", "empty"], top


def leases_and_metadata():
    b = cont.get_blob_client("a")
    lease = b.acquire_lease(lease_duration=15)
    try:
        b.set_blob_metadata({"k": "v"})
        raise AssertionError("write without the lease id succeeded")
    except Exception as e:
        assert getattr(e, "error_code", None) == "LeaseIdMissing", e
    b.set_blob_metadata({"k": "v"}, lease=lease)
    assert b.get_blob_properties().metadata == {"k": "v"}
    lease.break_lease(lease_break_period=0)
    lease.release()


def sas_and_copy():
    token = generate_blob_sas(svc.account_name, name, "dir1/hello.txt", account_key=KEY,
                              permission=BlobSasPermissions(read=True),
                              expiry=datetime.datetime.utcnow() + datetime.timedelta(hours=1))
    url = cont.get_blob_client("dir1/hello.txt").url + "?" + token
    assert BlobClient.from_blob_url(url).download_blob().readall() == b"hello, blob world\n"
    dst = cont.get_blob_client("copy.txt")
    props = dst.start_copy_from_url(url, requires_sync=True)
    assert props["copy_status"] == "success", props
    assert dst.download_blob().readall() == b"hello, blob world\n"


def append_blob():
    b = cont.get_blob_client("log.txt")
    b.create_append_blob()
    b.append_block(b"line 1\n")
    b.append_block(b"line 2\n", appendpos_condition=7)
    assert b.download_blob().readall() == b"line 1\nline 2\n"


def cleanup():
    cont.delete_container()
    try:
        cont.get_container_properties()
        raise AssertionError("container still there")
    except ResourceNotFoundError:
        pass


for n, f in [("containers", containers), ("small blobs", small_blobs), ("big blob in blocks", big_blob),
             ("download across an overwrite", changed_mid_download), ("listing", listing),
             ("leases and metadata", leases_and_metadata), ("SAS and sync copy", sas_and_copy),
             ("append blob", append_blob), ("delete container", cleanup)]:
    check(n, f)
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
