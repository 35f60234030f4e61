#!/usr/bin/env bash
# bench-postgres.sh: measure Tablo on PostgreSQL (one and two front ends) side by side with
# Tablo on Pebble and with Azurite, through the official Go SDK (`tablo bench`), and write the
# "PostgreSQL engine" section of docs/benchmarks.md.
#
# It starts a throwaway PostgreSQL cluster (scripts/pg-throwaway: Debian's packages, default
# settings, fsync and synchronous_commit on), Azurite from npm (in memory), Tablo on Pebble and
# two Tablo front ends on the PostgreSQL database, all on 127.0.0.1. Every process it starts is
# stopped on exit. CPU figures are per process from /proc: a front end's own, and PostgreSQL's
# whole process tree (postmaster, backends, WAL writer, checkpointer, autovacuum).
#
# Three `tablo bench --compare` runs, each alternating its two endpoints workload by workload:
#   1. PostgreSQL with one front end vs Pebble
#   2. PostgreSQL with one front end vs Azurite
#   3. PostgreSQL with two front ends (workers alternate between them) vs one front end
#
# Environment knobs:
#   BENCH_DURATION=4s BENCH_OPS=20000 BENCH_PRELOAD=5000 BENCH_CONCURRENCY="4 16" BENCH_ROUNDS=1
#   BENCH_WORKLOADS=get,upsert-merge,insert-many-pk,insert-one-pk,batch-insert,page-partition,filter-scan
#   BENCH_OUT=docs/benchmarks.md (BENCH_OUT=- prints the section instead)
#   TMPDIR (where the Pebble data, Azurite and the logs go)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

AZURITE_VERSION=3.37.0
DURATION=${BENCH_DURATION:-4s}
OPS=${BENCH_OPS:-20000}
PRELOAD=${BENCH_PRELOAD:-5000}
CONCURRENCY=${BENCH_CONCURRENCY:-"4 16"}
ROUNDS=${BENCH_ROUNDS:-1}
WORKLOADS=${BENCH_WORKLOADS:-get,upsert-merge,insert-many-pk,insert-one-pk,batch-insert,page-partition,filter-scan}
OUT=${BENCH_OUT:-docs/benchmarks.md}

DEV_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
conn() {
	echo "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$DEV_KEY;TableEndpoint=http://127.0.0.1:$1/devstoreaccount1;"
}
log() { echo "bench-postgres: $*" >&2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tablo-bench-pg.XXXXXX")
PIDS=()
PGDIR=""
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	[[ -z $PGDIR ]] || scripts/pg-throwaway stop "$PGDIR" >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# wait_port PORT PID SECONDS
wait_port() {
	local port=$1 pid=$2 i
	for ((i = 0; i < $3 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 1
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}

log "building tablo"
go build -o "$WORK/tablo" ./cmd/tablo

log "starting a throwaway PostgreSQL cluster"
read -r PGURL PGDIR < <(scripts/pg-throwaway --dir)
PGPID=$(head -1 "$PGDIR/data/postmaster.pid")
PGVERSION=$(psql "$PGURL" -Atc 'SHOW server_version' 2>/dev/null || echo unknown)
PGSETTINGS=$(psql "$PGURL" -Atc "SELECT string_agg(name || ' = ' || setting, ', ' ORDER BY name) FROM pg_settings WHERE name IN ('fsync','synchronous_commit','wal_sync_method','shared_buffers','commit_delay','max_wal_size','full_page_writes')" 2>/dev/null || echo unknown)

log "installing Azurite $AZURITE_VERSION"
npm install --prefix "$WORK/azurite" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >"$WORK/npm.log" 2>&1 ||
	{ cat "$WORK/npm.log" >&2; exit 1; }

# start NAME PORT ARGS...: a Tablo serving only the Table service on PORT (no admin
# listener); its process id is left in STARTED.
start() {
	local name=$1 port=$2
	shift 2
	"$WORK/tablo" --host 127.0.0.1 --table-port "$port" --admin-port -1 --services table --log-level warn "$@" >"$WORK/$name.log" 2>&1 &
	STARTED=$!
	PIDS+=("$STARTED")
	wait_port "$port" "$STARTED" 30 || { cat "$WORK/$name.log" >&2; log "$name did not start"; exit 1; }
}

AZ_PORT=$(free_port)
mkdir -p "$WORK/azurite-data"
(cd "$WORK/azurite-data" && exec "$WORK/azurite/node_modules/.bin/azurite-table" --inMemoryPersistence \
	--skipApiVersionCheck --loose --silent --disableTelemetry \
	--tableHost 127.0.0.1 --tablePort "$AZ_PORT" >"$WORK/azurite.log" 2>&1) &
AZ_PID=$!
PIDS+=("$AZ_PID")
wait_port "$AZ_PORT" "$AZ_PID" 30 || { cat "$WORK/azurite.log" >&2; log "Azurite did not start"; exit 1; }

PEB_PORT=$(free_port)
start pebble "$PEB_PORT" --data-dir "$WORK/pebble"
PEB_PID=$STARTED
FE1_PORT=$(free_port)
start pg-fe1 "$FE1_PORT" --data-dir "$WORK/fe1" --postgres "$PGURL"
FE1_PID=$STARTED
FE2_PORT=$(free_port)
start pg-fe2 "$FE2_PORT" --data-dir "$WORK/fe2" --postgres "$PGURL"
FE2_PID=$STARTED

COMMON=(--ops "$OPS" --duration "$DURATION" --preload "$PRELOAD" --workloads "$WORKLOADS" --rounds "$ROUNDS")
START=$(date +%s)
for c in $CONCURRENCY; do
	log "concurrency $c: PostgreSQL (1 front end) vs Pebble"
	"$WORK/tablo" bench --conn "$(conn "$FE1_PORT")" --label pg-1fe --pid "$FE1_PID" --db-pid "$PGPID" \
		--compare "$(conn "$PEB_PORT")" --compare-label pebble --compare-pid "$PEB_PID" \
		--concurrency "$c" "${COMMON[@]}" --json "$WORK/vs-pebble.jsonl" >&2 || log "some runs failed (see the report)"
	log "concurrency $c: PostgreSQL (1 front end) vs Azurite"
	"$WORK/tablo" bench --conn "$(conn "$FE1_PORT")" --label pg-1fe --pid "$FE1_PID" --db-pid "$PGPID" \
		--compare "$(conn "$AZ_PORT")" --compare-label azurite --compare-pid "$AZ_PID" \
		--concurrency "$c" "${COMMON[@]}" --json "$WORK/vs-azurite.jsonl" >&2 || log "some runs failed (see the report)"
	log "concurrency $c: PostgreSQL, 2 front ends vs 1"
	"$WORK/tablo" bench --conn "$(conn "$FE1_PORT")" --also "$(conn "$FE2_PORT")" --label pg-2fe \
		--pid "$FE1_PID" --also-pid "$FE2_PID" --db-pid "$PGPID" \
		--compare "$(conn "$FE1_PORT")" --compare-label pg-1fe --compare-pid "$FE1_PID" --compare-db-pid "$PGPID" \
		--concurrency "$c" "${COMMON[@]}" --json "$WORK/two-fe.jsonl" >&2 || log "some runs failed (see the report)"
done
ELAPSED=$(($(date +%s) - START))
touch "$WORK/vs-pebble.jsonl" "$WORK/vs-azurite.jsonl" "$WORK/two-fe.jsonl"

CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown)
START_MARK='<!-- bench-postgres output: scripts/bench-postgres.sh rewrites from here to the end marker -->'
END_MARK='<!-- end of bench-postgres output -->'
section() {
	echo "$START_MARK"
	echo "### Measurements"
	echo
	echo "Generated by \`scripts/bench-postgres.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${ELAPSED}s of measured runs"
	echo "($(nproc) CPUs, $CPU_MODEL, $(uname -sr), $(go env GOVERSION); PostgreSQL $PGVERSION, $PGSETTINGS;"
	echo "Azurite $AZURITE_VERSION in memory). Each workload: a fresh table, $PRELOAD entities preloaded where it reads"
	echo "them, bounded by $OPS operations or $DURATION; the two endpoints of each table alternate. \"Server"
	echo "efficiency\" counts the CPU of the front end(s) and, for PostgreSQL, of the whole database"
	echo "(\`db NN%\` is the database's share of it)."
	echo
	echo "#### 1. PostgreSQL, one front end, vs Pebble"
	echo
	"$WORK/tablo" bench report --ratio pg-1fe/pebble "$WORK/vs-pebble.jsonl" | sed 's/^### /##### /'
	echo
	echo "#### 2. PostgreSQL, one front end, vs Azurite"
	echo
	"$WORK/tablo" bench report --ratio pg-1fe/azurite "$WORK/vs-azurite.jsonl" | sed 's/^### /##### /'
	echo
	echo "#### 3. PostgreSQL, two front ends vs one"
	echo
	"$WORK/tablo" bench report --ratio pg-2fe/pg-1fe "$WORK/two-fe.jsonl" | sed 's/^### /##### /'
	echo
	echo "$END_MARK"
}
section >"$WORK/section.md"
if [[ $OUT == - ]]; then
	cat "$WORK/section.md"
	exit 0
fi
# Replace the generated part between the markers; without them, append a new section.
if grep -qxF "$START_MARK" "$OUT" && grep -qxF "$END_MARK" "$OUT"; then
	s=$(grep -nxF "$START_MARK" "$OUT" | head -1 | cut -d: -f1)
	e=$(grep -nxF "$END_MARK" "$OUT" | head -1 | cut -d: -f1)
	{ head -n $((s - 1)) "$OUT"; cat "$WORK/section.md"; tail -n +$((e + 1)) "$OUT"; } >"$WORK/out.md"
else
	{ cat "$OUT"; echo; echo "## PostgreSQL engine"; echo; cat "$WORK/section.md"; } >"$WORK/out.md"
fi
cp "$WORK/out.md" "$OUT"
log "wrote $OUT"
