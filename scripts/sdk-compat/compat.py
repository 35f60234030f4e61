#!/usr/bin/python3
"""Drives a Tablo server through the official azure-data-tables SDK (12.4.2, Debian's
python3-azure) and exits non-zero on any mismatch.

Usage: TABLO_CONNECTION_STRING='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
AccountKey=...;TableEndpoint=http://127.0.0.1:PORT/devstoreaccount1;' /usr/bin/python3 compat.py

Without TABLO_CONNECTION_STRING it talks to the development account on 127.0.0.1:10002.
Each check prints PASS or FAIL; the last line counts them.
"""

import datetime
import json
import math
import os
import sys
import time
import traceback
import uuid

from azure.core import MatchConditions
from azure.core.exceptions import (
    HttpResponseError,
    ResourceExistsError,
    ResourceModifiedError,
    ResourceNotFoundError,
)
from azure.data.tables import (
    EdmType,
    EntityProperty,
    TableServiceClient,
    TableTransactionError,
    UpdateMode,
)

DEV_CONNECTION_STRING = (
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
    "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"
    "TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;"
)

UTC = datetime.timezone.utc
SPECIAL_KEYS = [
    ("O'Brien", "it's ''twice''"),
    ("with space", "  leading and trailing  "),
    ("100% sure", "%20 not an escape %"),
    ("ünïcödé 中文", "Ωmega ß"),
    ("emoji 😀🎉", "row 🚀"),
    ("plus+amp&eq=", "semi;colon,comma:colon@at"),
    ("(parens)", "$dollar!bang*star"),
]


class Mismatch(Exception):
    pass


def eq(got, want, what):
    if got != want:
        raise Mismatch(f"{what}: got {got!r}, want {want!r}")


def error_code(e):
    """The Azure error code of an SDK exception: the SDK's attribute, else the response body."""
    code = getattr(e, "error_code", None)
    if code is not None:
        return getattr(code, "value", code)
    try:
        return json.loads(e.response.text())["odata.error"]["code"]
    except Exception:  # noqa: BLE001 - a body that is not an Azure error has no code
        return None


def expect_error(fn, exc_type, status, code, what):
    try:
        fn()
    except exc_type as e:
        eq(e.status_code, status, what + " status")
        eq(error_code(e), code, what + " error code")
        return e
    raise Mismatch(f"{what}: no error, want {status} {code}")


def props(entity):
    """Custom properties of an entity (no keys)."""
    return {k: v for k, v in entity.items() if k not in ("PartitionKey", "RowKey")}


class Compat:
    def __init__(self, conn):
        self.svc = TableServiceClient.from_connection_string(conn, retry_total=0)
        self.suffix = uuid.uuid4().hex[:10]
        self.tables = []
        self.passed = []
        self.failed = []

    def table(self, stem):
        name = f"py{stem}{self.suffix}"
        self.tables.append(name)
        return self.svc.create_table(name)

    def check(self, name, fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - every failure is reported, then counted
            self.failed.append(name)
            print(f"FAIL {name}: {e}")
            traceback.print_exc(file=sys.stdout)
        else:
            self.passed.append(name)
            print(f"PASS {name}")

    # ---- tables ----

    def create_table_201(self):
        name = f"pycreate{self.suffix}"
        seen = {}

        def hook(response):
            seen["status"] = response.http_response.status_code
            seen["body"] = response.http_response.text()

        client = self.svc.create_table(name, raw_response_hook=hook)
        self.tables.append(name)
        eq(seen["status"], 201, "create_table status")
        body = json.loads(seen["body"])
        eq(body.get("TableName"), name, "create_table body TableName")
        eq(client.table_name, name, "TableClient.table_name")
        expect_error(lambda: self.svc.create_table(name), ResourceExistsError, 409,
                     "TableAlreadyExists", "create existing table")
        got = self.svc.create_table_if_not_exists(name)
        eq(got.table_name, name, "create_table_if_not_exists")

    def list_and_query_tables(self):
        stem = f"pylist{self.suffix}"
        names = [f"{stem}{i}" for i in range(3)]
        for n in names:
            self.svc.create_table(n)
            self.tables.append(n)
        found = [t.name for t in self.svc.query_tables(
            "TableName ge @lo and TableName lt @hi", parameters={"lo": stem, "hi": stem + "z"})]
        eq(sorted(found), names, "query_tables")
        pages = [[t.name for t in page] for page in self.svc.query_tables(
            "TableName ge @lo and TableName lt @hi", parameters={"lo": stem, "hi": stem + "z"},
            results_per_page=2).by_page()]
        eq(pages, [names[:2], names[2:]], "query_tables pages of 2")
        all_names = {t.name for t in self.svc.list_tables()}
        for n in names:
            if n not in all_names:
                raise Mismatch(f"list_tables misses {n}")
        self.svc.delete_table(names[2])
        self.tables.remove(names[2])
        found = [t.name for t in self.svc.query_tables(f"TableName eq '{names[2]}'")]
        eq(found, [], "deleted table still listed")
        self.svc.delete_table(names[2])  # deleting a missing table is not an error in the SDK

    # ---- single-entity operations ----

    def entity_crud(self):
        tc = self.table("crud")
        e = {"PartitionKey": "pk", "RowKey": "rk", "Name": "first", "N": 1}
        meta = tc.create_entity(e)
        etag1 = meta["etag"]
        got = tc.get_entity("pk", "rk")
        eq(props(got), {"Name": "first", "N": 1}, "get after insert")
        eq(got.metadata["etag"], etag1, "etag from get equals insert etag")
        if not isinstance(got.metadata["timestamp"], datetime.datetime):
            raise Mismatch("timestamp metadata is not a datetime")
        expect_error(lambda: tc.create_entity(e), ResourceExistsError, 409, "EntityAlreadyExists",
                     "insert duplicate")
        expect_error(lambda: tc.get_entity("pk", "missing"), ResourceNotFoundError, 404,
                     "ResourceNotFound", "get missing")

        # Replace with the current ETag: properties not sent disappear.
        meta = tc.update_entity({"PartitionKey": "pk", "RowKey": "rk", "Other": "x"},
                                mode=UpdateMode.REPLACE, etag=etag1,
                                match_condition=MatchConditions.IfNotModified)
        etag2 = meta["etag"]
        if etag2 == etag1:
            raise Mismatch("replace did not change the ETag")
        eq(props(tc.get_entity("pk", "rk")), {"Other": "x"}, "after replace with etag")

        # Stale ETag: 412.
        expect_error(lambda: tc.update_entity({"PartitionKey": "pk", "RowKey": "rk", "A": 1},
                                              mode=UpdateMode.MERGE, etag=etag1,
                                              match_condition=MatchConditions.IfNotModified),
                     ResourceModifiedError, 412, "UpdateConditionNotSatisfied", "merge with stale etag")

        # Merge with the current ETag keeps other properties.
        meta = tc.update_entity({"PartitionKey": "pk", "RowKey": "rk", "Added": True},
                                mode=UpdateMode.MERGE, etag=etag2,
                                match_condition=MatchConditions.IfNotModified)
        etag3 = meta["etag"]
        eq(props(tc.get_entity("pk", "rk")), {"Other": "x", "Added": True}, "after merge with etag")

        # Unconditional (*) merge and replace.
        tc.update_entity({"PartitionKey": "pk", "RowKey": "rk", "Star": 1}, mode=UpdateMode.MERGE)
        eq(props(tc.get_entity("pk", "rk")), {"Other": "x", "Added": True, "Star": 1}, "after merge *")
        tc.update_entity({"PartitionKey": "pk", "RowKey": "rk", "Only": "this"}, mode=UpdateMode.REPLACE,
                         match_condition=MatchConditions.Unconditionally)
        eq(props(tc.get_entity("pk", "rk")), {"Only": "this"}, "after replace *")
        expect_error(lambda: tc.update_entity({"PartitionKey": "pk", "RowKey": "nope", "A": 1}),
                     ResourceNotFoundError, 404, "ResourceNotFound", "update missing")

        # Upserts: replace and merge, on a new and on an existing entity.
        tc.upsert_entity({"PartitionKey": "pk", "RowKey": "up", "A": 1, "B": "b"}, mode=UpdateMode.REPLACE)
        eq(props(tc.get_entity("pk", "up")), {"A": 1, "B": "b"}, "upsert replace (new)")
        tc.upsert_entity({"PartitionKey": "pk", "RowKey": "up", "C": 2.5}, mode=UpdateMode.MERGE)
        eq(props(tc.get_entity("pk", "up")), {"A": 1, "B": "b", "C": 2.5}, "upsert merge (existing)")
        tc.upsert_entity({"PartitionKey": "pk", "RowKey": "up", "D": False}, mode=UpdateMode.REPLACE)
        eq(props(tc.get_entity("pk", "up")), {"D": False}, "upsert replace (existing)")
        tc.upsert_entity({"PartitionKey": "pk", "RowKey": "up2", "E": "e"}, mode=UpdateMode.MERGE)
        eq(props(tc.get_entity("pk", "up2")), {"E": "e"}, "upsert merge (new)")

        # Deletes: stale ETag, current ETag, unconditional, missing.
        cur = tc.get_entity("pk", "rk").metadata["etag"]
        expect_error(lambda: tc.delete_entity("pk", "rk", etag=etag3,
                                              match_condition=MatchConditions.IfNotModified),
                     ResourceModifiedError, 412, "UpdateConditionNotSatisfied", "delete with stale etag")
        tc.delete_entity("pk", "rk", etag=cur, match_condition=MatchConditions.IfNotModified)
        expect_error(lambda: tc.get_entity("pk", "rk"), ResourceNotFoundError, 404, "ResourceNotFound",
                     "get after delete")
        tc.delete_entity("pk", "up")
        tc.delete_entity(entity={"PartitionKey": "pk", "RowKey": "up2"})
        tc.delete_entity("pk", "never-existed")  # the SDK swallows 404 on delete
        eq([dict(x) for x in tc.list_entities()], [], "table empty after deletes")

    def get_with_select(self):
        tc = self.table("select")
        tc.create_entity({"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "two", "C": 3.5})
        got = tc.get_entity("p", "r", select=["A", "C"])
        eq(dict(got), {"A": 1, "C": 3.5}, "get_entity select")

    # ---- queries ----

    def query_filter_select_top(self):
        tc = self.table("query")
        for start in range(0, 40, 20):
            tc.submit_transaction([("create", {"PartitionKey": "q", "RowKey": f"r{i:03d}", "N": i,
                                               "Even": i % 2 == 0, "Tag": f"t{i % 3}"})
                                   for i in range(start, start + 20)])
        rows = list(tc.query_entities("N ge @lo and Even eq @even", parameters={"lo": 10, "even": True}))
        eq([r["N"] for r in rows], list(range(10, 40, 2)), "filter N ge 10 and Even")
        rows = list(tc.query_entities("PartitionKey eq @pk and Tag eq @tag", parameters={"pk": "q", "tag": "t1"},
                                      select=["N"]))
        eq([dict(r) for r in rows], [{"N": i} for i in range(40) if i % 3 == 1], "filter + select")
        pages = list(tc.query_entities("N lt @hi", parameters={"hi": 25}, results_per_page=7).by_page())
        sizes = [len(list(p)) for p in pages]
        eq(sizes, [7, 7, 7, 4], "top=7 page sizes")
        rows = list(tc.list_entities(select=["RowKey", "Tag"], results_per_page=1000))
        eq(len(rows), 40, "list_entities select count")
        eq(set(rows[0].keys()), {"RowKey", "Tag"}, "list_entities select keys")
        rows = list(tc.query_entities("RowKey gt 'r035' or N eq 3"))
        eq([r["N"] for r in rows], [3, 36, 37, 38, 39], "or filter")
        rows = list(tc.query_entities("not (N lt 38)"))
        eq([r["N"] for r in rows], [38, 39], "not filter")

    def query_paging_over_1000(self):
        tc = self.table("paging")
        total = 1234
        for start in range(0, total, 100):
            tc.submit_transaction([("upsert", {"PartitionKey": "big", "RowKey": f"r{i:05d}", "N": i})
                                   for i in range(start, min(start + 100, total))])
        pages = [list(p) for p in tc.list_entities().by_page()]
        eq([len(p) for p in pages], [1000, 234], "default page sizes over 1,234 entities")
        keys = [e["RowKey"] for p in pages for e in p]
        eq(keys, [f"r{i:05d}" for i in range(total)], "paged keys in order")
        pager = tc.query_entities("PartitionKey eq 'big'", results_per_page=500).by_page()
        first = list(next(pager))
        token = pager.continuation_token
        if not token:
            raise Mismatch("no continuation token after the first page of 500")
        rest = [e for p in tc.query_entities("PartitionKey eq 'big'", results_per_page=500)
                .by_page(continuation_token=token) for e in p]
        eq(len(first) + len(rest), total, "resume from continuation token")
        eq(rest[0]["N"], 500, "first entity after the continuation token")

    # ---- transactions ----

    def transaction_every_op(self):
        tc = self.table("batch")
        for i in range(6):
            tc.create_entity({"PartitionKey": "b", "RowKey": f"e{i}", "V": i, "Keep": "k"})
        etag1 = tc.get_entity("b", "e1").metadata["etag"]
        etag4 = tc.get_entity("b", "e4").metadata["etag"]
        ops = [
            ("create", {"PartitionKey": "b", "RowKey": "new", "V": 100}),
            ("update", {"PartitionKey": "b", "RowKey": "e1", "V": 11},
             {"mode": UpdateMode.MERGE, "etag": etag1, "match_condition": MatchConditions.IfNotModified}),
            ("update", {"PartitionKey": "b", "RowKey": "e2", "V": 12}, {"mode": UpdateMode.REPLACE}),
            ("upsert", {"PartitionKey": "b", "RowKey": "e3", "V": 13}, {"mode": UpdateMode.MERGE}),
            ("upsert", {"PartitionKey": "b", "RowKey": "e5", "V": 15}, {"mode": UpdateMode.REPLACE}),
            ("upsert", {"PartitionKey": "b", "RowKey": "ups", "V": 101}, {"mode": UpdateMode.REPLACE}),
            ("delete", {"PartitionKey": "b", "RowKey": "e4"},
             {"etag": etag4, "match_condition": MatchConditions.IfNotModified}),
            ("delete", {"PartitionKey": "b", "RowKey": "e0"}),
        ]
        result = tc.submit_transaction(ops)
        eq(len(result), len(ops), "transaction result count")
        for i, r in enumerate(result):
            if ops[i][0] != "delete" and "etag" not in r:
                raise Mismatch(f"transaction result {i} has no etag key: {r!r}")
        got = {e["RowKey"]: props(e) for e in tc.list_entities()}
        eq(got, {
            "new": {"V": 100},
            "e1": {"V": 11, "Keep": "k"},
            "e2": {"V": 12},
            "e3": {"V": 13, "Keep": "k"},
            "e5": {"V": 15},
            "ups": {"V": 101},
        }, "state after transaction")
        eq(tc.get_entity("b", "new").metadata["etag"], result[0]["etag"], "transaction insert etag")

    def transaction_failure(self):
        tc = self.table("batchfail")
        tc.create_entity({"PartitionKey": "f", "RowKey": "exists", "V": 1})
        ops = [
            ("create", {"PartitionKey": "f", "RowKey": "a", "V": 1}),
            ("upsert", {"PartitionKey": "f", "RowKey": "b", "V": 2}),
            ("create", {"PartitionKey": "f", "RowKey": "exists", "V": 3}),
            ("update", {"PartitionKey": "f", "RowKey": "missing", "V": 4}),
        ]
        try:
            tc.submit_transaction(ops)
        except TableTransactionError as e:
            eq(e.status_code, 409, "failed transaction status")
            eq(error_code(e), "EntityAlreadyExists", "failed transaction code")
            eq(e.index, 2, "failed transaction index")
        else:
            raise Mismatch("transaction with a duplicate insert succeeded")
        got = {e["RowKey"]: props(e) for e in tc.list_entities()}
        eq(got, {"exists": {"V": 1}}, "nothing applied after a failed transaction")
        etag = tc.get_entity("f", "exists").metadata["etag"]
        tc.update_entity({"PartitionKey": "f", "RowKey": "exists", "V": 5})
        try:
            tc.submit_transaction([
                ("upsert", {"PartitionKey": "f", "RowKey": "c", "V": 1}),
                ("update", {"PartitionKey": "f", "RowKey": "exists", "V": 6},
                 {"etag": etag, "match_condition": MatchConditions.IfNotModified}),
            ])
        except TableTransactionError as e:
            eq(e.status_code, 412, "stale etag in transaction status")
            eq(e.index, 1, "stale etag in transaction index")
        else:
            raise Mismatch("transaction with a stale etag succeeded")
        # Two partitions in one transaction: this SDK refuses client-side (ValueError).
        expect_error(lambda: tc.submit_transaction([
            ("upsert", {"PartitionKey": "f", "RowKey": "x"}),
            ("delete", {"PartitionKey": "f", "RowKey": "x"}),
        ]), TableTransactionError, 400, "InvalidDuplicateRow", "same row twice")
        eq(sorted(e["RowKey"] for e in tc.list_entities()), ["exists"], "nothing applied after failures")

    # ---- types and keys ----

    def type_round_trip(self):
        tc = self.table("types")
        guid = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
        dt = datetime.datetime(2024, 5, 1, 10, 20, 30, 123456, tzinfo=UTC)
        e = {
            "PartitionKey": "t", "RowKey": "all",
            "Str": "héllo ☃ 😀 \"quoted\" \\ / \n\t", "Empty": "",
            "I32": 2147483647, "I32Min": -2147483648, "I32Typed": EntityProperty(7, EdmType.INT32),
            "I64Max": EntityProperty(9223372036854775807, EdmType.INT64),
            "I64Min": EntityProperty(-9223372036854775808, EdmType.INT64),
            "I64Small": EntityProperty(1, EdmType.INT64),
            "Dbl": 1.5, "DblWhole": 3.0, "DblTiny": 5e-324, "DblHuge": 1.7976931348623157e308,
            "DblNeg": -0.1, "Nan": float("nan"), "Inf": float("inf"), "NegInf": float("-inf"),
            "True": True, "False": False,
            "Date": dt, "DateMin": datetime.datetime(1601, 1, 1, tzinfo=UTC),
            "DateMax": datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            "Bin": b"\x00\x01\x02\xfe\xff", "BinTyped": EntityProperty(b"abc", EdmType.BINARY),
            "Guid": guid, "GuidTyped": EntityProperty(str(guid), EdmType.GUID),
            "StrTyped": EntityProperty("typed", EdmType.STRING),
        }
        tc.create_entity(e)
        for got in (tc.get_entity("t", "all"), next(iter(tc.list_entities()))):
            eq(got["Str"], e["Str"], "String")
            eq(got["Empty"], "", "empty String")
            eq(got["I32"], 2147483647, "Int32 max")
            eq(got["I32Min"], -2147483648, "Int32 min")
            eq(got["I32Typed"], 7, "typed Int32")
            for name in ("I64Max", "I64Min", "I64Small"):
                eq(got[name], EntityProperty(e[name].value, EdmType.INT64), name)
            eq(got["Dbl"], 1.5, "Double")
            eq((got["DblWhole"], type(got["DblWhole"])), (3.0, float), "whole Double stays Double")
            eq(got["DblTiny"], 5e-324, "Double subnormal")
            eq(got["DblHuge"], 1.7976931348623157e308, "Double max")
            eq(got["DblNeg"], -0.1, "negative Double")
            if not math.isnan(got["Nan"]):
                raise Mismatch(f"NaN: got {got['Nan']!r}")
            eq(got["Inf"], float("inf"), "Infinity")
            eq(got["NegInf"], float("-inf"), "-Infinity")
            eq((got["True"], got["False"]), (True, False), "Boolean")
            eq(got["Date"], dt, "DateTime")
            eq(got["DateMin"], e["DateMin"], "DateTime min")
            eq(got["DateMax"], e["DateMax"], "DateTime max")
            eq(got["Bin"], e["Bin"], "Binary")
            eq(got["BinTyped"], b"abc", "typed Binary")
            eq(got["Guid"], guid, "Guid")
            eq(got["GuidTyped"], guid, "typed Guid")
            eq(got["StrTyped"], "typed", "typed String")
        # 7-digit DateTime precision: the service value keeps the ticks Python cannot hold.
        raw = {"PartitionKey": "t", "RowKey": "ticks",
               "When": EntityProperty("2024-05-01T10:20:30.1234567Z", EdmType.DATETIME)}
        tc.create_entity(raw)
        got = tc.get_entity("t", "ticks")
        eq(got["When"].tables_service_value, "2024-05-01T10:20:30.1234567Z", "DateTime ticks on the wire")
        # A value read back is sent back verbatim and stays equal.
        tc.update_entity(got, mode=UpdateMode.REPLACE)
        eq(tc.get_entity("t", "ticks")["When"].tables_service_value, "2024-05-01T10:20:30.1234567Z",
           "DateTime ticks after a read-modify-write")
        # Query by typed literals.
        rows = list(tc.query_entities("I64Max eq 9223372036854775807L and Guid eq @g and Date eq @d and Bin eq @b",
                                      parameters={"g": guid, "d": dt, "b": b"\x00\x01\x02\xfe\xff"}))
        eq([r["RowKey"] for r in rows], ["all"], "query by Int64, Guid, DateTime, Binary literals")

    def special_keys(self):
        tc = self.table("keys")
        for pk, rk in SPECIAL_KEYS:
            tc.create_entity({"PartitionKey": pk, "RowKey": rk, "V": 1})
            got = tc.get_entity(pk, rk)
            eq((got["PartitionKey"], got["RowKey"], got["V"]), (pk, rk, 1), f"get {pk!r}/{rk!r}")
            tc.update_entity({"PartitionKey": pk, "RowKey": rk, "W": 2}, mode=UpdateMode.MERGE,
                             etag=got.metadata["etag"], match_condition=MatchConditions.IfNotModified)
            rows = list(tc.query_entities("PartitionKey eq @pk and RowKey eq @rk", parameters={"pk": pk, "rk": rk}))
            eq([props(r) for r in rows], [{"V": 1, "W": 2}], f"query {pk!r}/{rk!r}")
        pk = SPECIAL_KEYS[0][0]
        tc.submit_transaction([("upsert", {"PartitionKey": pk, "RowKey": rk, "B": True}) for _, rk in SPECIAL_KEYS])
        eq(len(list(tc.query_entities("PartitionKey eq @pk", parameters={"pk": pk}))), len(SPECIAL_KEYS),
           "transaction with special row keys")
        tc.submit_transaction([("delete", {"PartitionKey": pk, "RowKey": rk}) for _, rk in SPECIAL_KEYS])
        for pk, rk in SPECIAL_KEYS[1:]:
            tc.delete_entity(pk, rk)
            expect_error(lambda: tc.get_entity(pk, rk), ResourceNotFoundError, 404, "ResourceNotFound",
                         f"get {pk!r}/{rk!r} after delete")
        eq(list(tc.list_entities()), [], "no entities left")

    def deleted_table(self):
        name = f"pygone{self.suffix}"
        tc = self.svc.create_table(name)
        tc.create_entity({"PartitionKey": "p", "RowKey": "r"})
        tc.delete_table()
        expect_error(lambda: tc.get_entity("p", "r"), ResourceNotFoundError, 404, "TableNotFound",
                     "get from a deleted table")
        expect_error(lambda: tc.create_entity({"PartitionKey": "p", "RowKey": "r"}), ResourceNotFoundError, 404,
                     "TableNotFound", "insert into a deleted table")

    def run(self):
        began = time.monotonic()
        self.check("create_table (201 body), existing table, create_table_if_not_exists", self.create_table_201)
        self.check("list_tables, query_tables (filter, paging), delete_table", self.list_and_query_tables)
        self.check("insert, get, update replace/merge with etag and *, upsert, delete", self.entity_crud)
        self.check("get_entity with select", self.get_with_select)
        self.check("query filter/select/top", self.query_filter_select_top)
        self.check("query paging over 1,000 entities", self.query_paging_over_1000)
        self.check("transaction with every operation kind", self.transaction_every_op)
        self.check("failing transactions are atomic", self.transaction_failure)
        self.check("type round-trips", self.type_round_trip)
        self.check("special keys", self.special_keys)
        self.check("operations on a deleted table", self.deleted_table)
        for name in self.tables:
            try:
                self.svc.delete_table(name)
            except HttpResponseError as e:
                print(f"cleanup {name}: {e}")
        print(f"python sdk-compat (azure-data-tables): {len(self.passed)} checks passed, "
              f"{len(self.failed)} failed in {time.monotonic() - began:.1f}s")
        return not self.failed


def main():
    conn = os.environ.get("TABLO_CONNECTION_STRING") or DEV_CONNECTION_STRING
    ok = Compat(conn).run()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
