#!/usr/bin/env bash
# bench-azurite.sh: measure Tablo (default durable mode) and Azurite side by side through the
# official Go SDKs (aztables for the Table service, azqueue for the Queue service), against the
# null-server ceiling of this machine, and write docs/benchmarks.md.
#
# Everything runs on 127.0.0.1, every run is bounded by an operation count and a duration, and
# every process this script starts is stopped on exit. Tablo is skipped (with a note in the
# report) when it does not build or does not start.
#
# Environment knobs (defaults keep the whole run to a few minutes on 2 cores):
#   BENCH_OPS=20000 BENCH_DURATION=4s BENCH_PRELOAD=5000 BENCH_CONCURRENCY="1 16"
#   BENCH_ENTITY_SIZE=256 BENCH_WORKLOADS=all BENCH_OUT=docs/benchmarks.md BENCH_ROUNDS=1
#   BENCH_SERVICES="table queue" BENCH_QUEUE_MESSAGES=2000 (preload and op bound of a queue run; Azurite answers no
#   get within 30 s once its queue holds ~12,000 messages)
#   AZURITE_PORT=10102 TABLO_PORT=10302 NULL_PORT=10202 AZURITE_QUEUE_PORT=10103 TABLO_QUEUE_PORT=10303
#   AZURITE_QUEUE_MEMORY=1 (Azurite's queue service in memory instead of its default, on disk)
# Blob knobs (BENCH_SERVICES=blob runs only the Blob table and rewrites only its section; add
# blob to the list to run it beside the others):
#   BENCH_BLOB_OPS=20000 BENCH_BLOB_DURATION=4s BENCH_BLOB_ROUNDS=1 BENCH_BLOB_LIST=100000 (blobs in the
#   listed container) BENCH_BLOB_WORKLOADS=<the six transfers> BENCH_BLOB_LIST_CONCURRENCY=1
#   AZURITE_BLOB_PORT=10100 TABLO_BLOB_PORT=10300 NULL_BLOB_PORT=10200
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

AZURITE_VERSION=3.37.0
OPS=${BENCH_OPS:-20000}
DURATION=${BENCH_DURATION:-4s}
PRELOAD=${BENCH_PRELOAD:-5000}
CONCURRENCY=${BENCH_CONCURRENCY:-"1 16"}
ENTITY_SIZE=${BENCH_ENTITY_SIZE:-256}
WORKLOADS=${BENCH_WORKLOADS:-all}
OUT=${BENCH_OUT:-docs/benchmarks.md}
ROUNDS=${BENCH_ROUNDS:-1}
AZURITE_PORT=${AZURITE_PORT:-10102}
TABLO_PORT=${TABLO_PORT:-10302}
NULL_PORT=${NULL_PORT:-10202}
SERVICES=${BENCH_SERVICES:-"table queue"}
QUEUE_MESSAGES=${BENCH_QUEUE_MESSAGES:-2000}
AZURITE_QUEUE_PORT=${AZURITE_QUEUE_PORT:-10103}
TABLO_QUEUE_PORT=${TABLO_QUEUE_PORT:-10303}
has_service() { [[ " $SERVICES " == *" $1 "* ]]; }
BLOB_OPS=${BENCH_BLOB_OPS:-20000}
BLOB_DURATION=${BENCH_BLOB_DURATION:-4s}
BLOB_ROUNDS=${BENCH_BLOB_ROUNDS:-1}
BLOB_LIST=${BENCH_BLOB_LIST:-100000}
BLOB_WORKLOADS=${BENCH_BLOB_WORKLOADS:-blob-upload-1k,blob-download-1k,blob-upload-1m,blob-download-1m,blob-upload-256m,blob-download-256m}
BLOB_LIST_CONCURRENCY=${BENCH_BLOB_LIST_CONCURRENCY:-1}
AZURITE_BLOB_PORT=${AZURITE_BLOB_PORT:-10100}
TABLO_BLOB_PORT=${TABLO_BLOB_PORT:-10300}
NULL_BLOB_PORT=${NULL_BLOB_PORT:-10200}
# blob_conn PORT: a connection string whose Blob endpoint is 127.0.0.1:PORT.
blob_conn() {
	echo "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$DEV_KEY;TableEndpoint=http://127.0.0.1:1/devstoreaccount1;BlobEndpoint=http://127.0.0.1:$1/devstoreaccount1;"
}

DEV_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
# conn TABLE_PORT [QUEUE_PORT]: a connection string naming the Table and, given, Queue endpoint.
conn() {
	echo -n "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=$DEV_KEY;TableEndpoint=http://127.0.0.1:$1/devstoreaccount1;"
	[[ -z ${2:-} ]] || echo -n "QueueEndpoint=http://127.0.0.1:$2/devstoreaccount1;"
	echo
}

WORK=$(mktemp -d /tmp/tablo-bench.XXXXXX)
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "bench-azurite: $*" >&2; }

# wait_port PORT PID SECONDS: wait until something listens on 127.0.0.1:PORT while PID lives.
wait_port() {
	local port=$1 pid=$2 i
	for ((i = 0; i < $3 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || return 1
		if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

COMMANDS=() # every command whose output is in the report, for the "exact commands" section
record() { COMMANDS+=("$*"); }

# --- the bench client -------------------------------------------------------------------------
log "building tablo"
go build -o "$WORK/tablo" ./cmd/tablo
BENCH=("$WORK/tablo" bench)
BENCH_NAME="tablo bench"
TABLO_BUILT=1
TABLO_NOTE=""

# --- Azurite ----------------------------------------------------------------------------------
log "installing Azurite $AZURITE_VERSION"
npm install --prefix "$WORK/azurite" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >"$WORK/npm.log" 2>&1 ||
	{ cat "$WORK/npm.log" >&2; exit 1; }
mkdir -p "$WORK/azurite-data"
# exec and the bin's "#!/usr/bin/env node" keep one process, so $! is node itself (for --pid).
# It runs in its own folder because Azurite may write files into its working directory.
(cd "$WORK/azurite-data" && exec "$WORK/azurite/node_modules/.bin/azurite-table" --inMemoryPersistence \
	--skipApiVersionCheck --loose --silent --disableTelemetry \
	--tableHost 127.0.0.1 --tablePort "$AZURITE_PORT" >"$WORK/azurite.log" 2>&1) &
AZURITE_PID=$!
PIDS+=("$AZURITE_PID")
wait_port "$AZURITE_PORT" "$AZURITE_PID" 30 || { cat "$WORK/azurite.log" >&2; log "Azurite did not start"; exit 1; }
AZURITE_CMD="azurite-table --inMemoryPersistence --skipApiVersionCheck --loose --silent --disableTelemetry --tableHost 127.0.0.1 --tablePort $AZURITE_PORT"
# Azurite's Queue service is its own process (its own CPU figure).
AZURITE_QUEUE_CMD=""
if has_service queue; then
	mkdir -p "$WORK/azurite-queue-data"
	# Azurite's default keeps queues on disk (--location), as users run it and as the Blob
	# comparison does; AZURITE_QUEUE_MEMORY=1 runs it in memory (not durable, cheaper per put).
	AZ_QUEUE_STORE=(--location "$WORK/azurite-queue-data")
	AZ_QUEUE_STORE_REC='--location $(mktemp -d)'
	if [[ ${AZURITE_QUEUE_MEMORY:-0} == 1 ]]; then
		AZ_QUEUE_STORE=(--inMemoryPersistence)
		AZ_QUEUE_STORE_REC=--inMemoryPersistence
	fi
	(cd "$WORK/azurite-queue-data" && exec "$WORK/azurite/node_modules/.bin/azurite-queue" "${AZ_QUEUE_STORE[@]}" \
		--skipApiVersionCheck --loose --silent --disableTelemetry \
		--queueHost 127.0.0.1 --queuePort "$AZURITE_QUEUE_PORT" >"$WORK/azurite-queue.log" 2>&1) &
	AZURITE_QUEUE_PID=$!
	PIDS+=("$AZURITE_QUEUE_PID")
	wait_port "$AZURITE_QUEUE_PORT" "$AZURITE_QUEUE_PID" 30 || { cat "$WORK/azurite-queue.log" >&2; log "Azurite's queue service did not start"; exit 1; }
	AZURITE_QUEUE_CMD="azurite-queue $AZ_QUEUE_STORE_REC --skipApiVersionCheck --loose --silent --disableTelemetry --queueHost 127.0.0.1 --queuePort $AZURITE_QUEUE_PORT"
fi

# --- Tablo --------------------------------------------------------------------------------------
TABLO_OK=0
TABLO_CMD=""
if [[ $TABLO_BUILT == 1 ]]; then
	mkdir -p "$WORK/tablo-data"
	"$WORK/tablo" --data-dir "$WORK/tablo-data" --host 127.0.0.1 --table-port "$TABLO_PORT" \
		--queue-port "$TABLO_QUEUE_PORT" --admin-port -1 --services table,queue --log-level warn >"$WORK/tablo.log" 2>&1 &
	TABLO_PID=$!
	PIDS+=("$TABLO_PID")
	TABLO_CMD="tablo --data-dir \$(mktemp -d) --host 127.0.0.1 --table-port $TABLO_PORT --queue-port $TABLO_QUEUE_PORT --admin-port -1 --services table,queue --log-level warn"
	if wait_port "$TABLO_PORT" "$TABLO_PID" 20; then
		TABLO_OK=1
	else
		TABLO_NOTE="Tablo was skipped: it built but did not listen on port $TABLO_PORT within 20 s ($(tail -c 300 "$WORK/tablo.log" | tr '\n' ' '))."
		log "tablo did not start; continuing without it"
	fi
fi

# --- null server (the ceiling) ------------------------------------------------------------------
# Its canned query answers are shaped like the real ones: pages of $top entities for
# ceil(preload/1000) pages, and a filtered scan that returns 1% of the preload.
SCAN_SIZE=$(( PRELOAD / 100 > 0 ? PRELOAD / 100 : 1 ))
PAGES=$(( (PRELOAD + 999) / 1000 ))
NULL_ARGS=(null-server --addr "127.0.0.1:$NULL_PORT" --entity-size "$ENTITY_SIZE" --scan-size "$SCAN_SIZE" --pages "$PAGES" --lifetime 30m)
"${BENCH[@]}" "${NULL_ARGS[@]}" >"$WORK/null.log" 2>&1 &
NULL_PID=$!
PIDS+=("$NULL_PID")
wait_port "$NULL_PORT" "$NULL_PID" 20 || { cat "$WORK/null.log" >&2; log "null server did not start"; exit 1; }
NULL_CMD="$BENCH_NAME ${NULL_ARGS[*]}"

# --- the runs -----------------------------------------------------------------------------------
RESULTS="$WORK/results.jsonl"
COMMON=(--ops "$OPS" --duration "$DURATION" --preload "$PRELOAD" --entity-size "$ENTITY_SIZE" --workloads "$WORKLOADS" --rounds "$ROUNDS" --json "$RESULTS")
START=$(date +%s)
has_service table || CONCURRENCY_TABLE=""
for c in ${CONCURRENCY_TABLE-$CONCURRENCY}; do
	log "concurrency $c: null server"
	args=(--conn "$(conn "$NULL_PORT")" --label null --pid "$NULL_PID" --concurrency "$c" "${COMMON[@]}")
	"${BENCH[@]}" "${args[@]}" >&2
	record "$BENCH_NAME --conn \"\$NULL\" --label null --pid \$NULL_PID --concurrency $c ${COMMON[*]}"
	if [[ $TABLO_OK == 1 ]]; then
		log "concurrency $c: tablo vs azurite"
		args=(--conn "$(conn "$TABLO_PORT")" --label tablo --pid "$TABLO_PID"
			--compare "$(conn "$AZURITE_PORT")" --compare-label azurite --compare-pid "$AZURITE_PID"
			--concurrency "$c" "${COMMON[@]}")
		# A Tablo failure must not lose the Azurite numbers: bench reports and carries on.
		"${BENCH[@]}" "${args[@]}" >&2 || log "some tablo/azurite runs failed (see the report)"
		record "$BENCH_NAME --conn \"\$TABLO\" --label tablo --pid \$TABLO_PID --compare \"\$AZURITE\" --compare-label azurite --compare-pid \$AZURITE_PID --concurrency $c ${COMMON[*]}"
	else
		log "concurrency $c: azurite"
		args=(--conn "$(conn "$AZURITE_PORT")" --label azurite --pid "$AZURITE_PID" --concurrency "$c" "${COMMON[@]}")
		"${BENCH[@]}" "${args[@]}" >&2 || log "some azurite runs failed (see the report)"
		record "$BENCH_NAME --conn \"\$AZURITE\" --label azurite --pid \$AZURITE_PID --concurrency $c ${COMMON[*]}"
	fi
done

# Queue workloads: each run preloads (get-delete, peek) and is bounded by the same message
# count, so a get-delete run never drains its queue. The null server answers Queue requests
# on its one port.
QRESULTS="$WORK/queue-results.jsonl"
QCOMMON=(--ops "$QUEUE_MESSAGES" --duration "$DURATION" --preload "$QUEUE_MESSAGES" --workloads queue --rounds "$ROUNDS" --json "$QRESULTS")
if has_service queue; then
	for c in $CONCURRENCY; do
		log "queue, concurrency $c: null server"
		"${BENCH[@]}" --conn "$(conn "$NULL_PORT" "$NULL_PORT")" --label null --pid "$NULL_PID" --concurrency "$c" "${QCOMMON[@]}" >&2
		record "$BENCH_NAME --conn \"\$NULL\" --label null --pid \$NULL_PID --concurrency $c ${QCOMMON[*]}"
		if [[ $TABLO_OK == 1 ]]; then
			log "queue, concurrency $c: tablo vs azurite"
			"${BENCH[@]}" --conn "$(conn "$TABLO_PORT" "$TABLO_QUEUE_PORT")" --label tablo --pid "$TABLO_PID" \
				--compare "$(conn "$AZURITE_PORT" "$AZURITE_QUEUE_PORT")" --compare-label azurite --compare-pid "$AZURITE_QUEUE_PID" \
				--concurrency "$c" "${QCOMMON[@]}" >&2 || log "some tablo/azurite queue runs failed (see the report)"
			record "$BENCH_NAME --conn \"\$TABLO\" --label tablo --pid \$TABLO_PID --compare \"\$AZURITE_QUEUE\" --compare-label azurite --compare-pid \$AZURITE_QUEUE_PID --concurrency $c ${QCOMMON[*]}"
		fi
	done
fi
# Blob workloads: Tablo and Azurite's blob service (on disk, its default) side by side, with
# both ceilings in the same rounds: the null server's Blob listener and a write+fsync of the
# same bytes (uploads only). Each service runs as its own process, so each CPU figure is the
# Blob service's alone.
BRESULTS="$WORK/blob-results.jsonl"
BLOB_NOTE=""
BLOB_COMMANDS=() # the Blob section lists its own commands
if has_service blob; then
	mkdir -p "$WORK/azurite-blob-data" "$WORK/tablo-blob-data" "$WORK/disk"
	(cd "$WORK/azurite-blob-data" && exec "$WORK/azurite/node_modules/.bin/azurite-blob" --location "$WORK/azurite-blob-data" \
		--skipApiVersionCheck --loose --silent --disableTelemetry \
		--blobHost 127.0.0.1 --blobPort "$AZURITE_BLOB_PORT" >"$WORK/azurite-blob.log" 2>&1) &
	AZURITE_BLOB_PID=$!
	PIDS+=("$AZURITE_BLOB_PID")
	wait_port "$AZURITE_BLOB_PORT" "$AZURITE_BLOB_PID" 30 || { cat "$WORK/azurite-blob.log" >&2; log "Azurite's blob service did not start"; exit 1; }
	AZURITE_BLOB_CMD="azurite-blob --location \$(mktemp -d) --skipApiVersionCheck --loose --silent --disableTelemetry --blobHost 127.0.0.1 --blobPort $AZURITE_BLOB_PORT"
	"$WORK/tablo" --data-dir "$WORK/tablo-blob-data" --host 127.0.0.1 --blob-port "$TABLO_BLOB_PORT" --admin-port -1 \
		--services blob --log-level warn >"$WORK/tablo-blob.log" 2>&1 &
	TABLO_BLOB_PID=$!
	PIDS+=("$TABLO_BLOB_PID")
	TABLO_BLOB_CMD="tablo --data-dir \$(mktemp -d) --host 127.0.0.1 --blob-port $TABLO_BLOB_PORT --admin-port -1 --services blob --log-level warn"
	NULL_BLOB_ARGS=(null-server --addr 127.0.0.1:0 --blob-addr "127.0.0.1:$NULL_BLOB_PORT" --list-blobs "$BLOB_LIST" --lifetime 60m)
	"${BENCH[@]}" "${NULL_BLOB_ARGS[@]}" >"$WORK/null-blob.log" 2>&1 &
	NULL_BLOB_PID=$!
	PIDS+=("$NULL_BLOB_PID")
	wait_port "$NULL_BLOB_PORT" "$NULL_BLOB_PID" 20 || { cat "$WORK/null-blob.log" >&2; log "null Blob server did not start"; exit 1; }
	NULL_BLOB_CMD="$BENCH_NAME ${NULL_BLOB_ARGS[*]}"
	if wait_port "$TABLO_BLOB_PORT" "$TABLO_BLOB_PID" 20; then
		BASE=(--conn "$(blob_conn "$TABLO_BLOB_PORT")" --label tablo --pid "$TABLO_BLOB_PID"
			--compare "$(blob_conn "$AZURITE_BLOB_PORT")" --compare-label azurite --compare-pid "$AZURITE_BLOB_PID")
		BASE_REC="--conn \"\$TABLO_BLOB\" --label tablo --pid \$TABLO_BLOB_PID --compare \"\$AZURITE_BLOB\" --compare-label azurite --compare-pid \$AZURITE_BLOB_PID"
	else
		BLOB_NOTE="Tablo was skipped: it did not listen on port $TABLO_BLOB_PORT within 20 s ($(tail -c 300 "$WORK/tablo-blob.log" | tr '\n' ' '))."
		BASE=(--conn "$(blob_conn "$AZURITE_BLOB_PORT")" --label azurite --pid "$AZURITE_BLOB_PID")
		BASE_REC="--conn \"\$AZURITE_BLOB\" --label azurite --pid \$AZURITE_BLOB_PID"
	fi
	CEIL=(--ceiling "$(blob_conn "$NULL_BLOB_PORT")" --ceiling-pid "$NULL_BLOB_PID" --disk-dir "$WORK/disk")
	CEIL_REC="--ceiling \"\$NULL_BLOB\" --ceiling-pid \$NULL_BLOB_PID --disk-dir \$(mktemp -d)"
	BCOMMON=(--ops "$BLOB_OPS" --duration "$BLOB_DURATION" --rounds "$BLOB_ROUNDS" --op-timeout 10m --json "$BRESULTS")
	for c in $CONCURRENCY; do
		log "blob, concurrency $c: tablo vs azurite, null and disk ceilings"
		"${BENCH[@]}" "${BASE[@]}" "${CEIL[@]}" --concurrency "$c" --workloads "$BLOB_WORKLOADS" "${BCOMMON[@]}" >&2 ||
			log "some blob runs failed (see the report)"
		BLOB_COMMANDS+=("$BENCH_NAME $BASE_REC $CEIL_REC --concurrency $c --workloads $BLOB_WORKLOADS ${BCOMMON[*]}")
	done
	for c in $BLOB_LIST_CONCURRENCY; do
		log "blob-list of $BLOB_LIST blobs, concurrency $c"
		"${BENCH[@]}" "${BASE[@]}" "${CEIL[@]}" --concurrency "$c" --workloads blob-list --list-preload "$BLOB_LIST" "${BCOMMON[@]}" >&2 ||
			log "some blob-list runs failed (see the report)"
		BLOB_COMMANDS+=("$BENCH_NAME $BASE_REC $CEIL_REC --concurrency $c --workloads blob-list --list-preload $BLOB_LIST ${BCOMMON[*]}")
	done
	touch "$BRESULTS"
	BLOB_REPORT_ARGS=(report --ceiling null,disk)
	[[ -z $BLOB_NOTE ]] && BLOB_REPORT_ARGS+=(--ratio tablo/azurite)
	"${BENCH[@]}" "${BLOB_REPORT_ARGS[@]}" "$BRESULTS" >"$WORK/blob-tables.md" || echo "No Blob results." >"$WORK/blob-tables.md"
fi

# write_blob_section puts the Blob results between their own markers in $OUT (after the main
# section's end marker), replacing an earlier Blob section and leaving the rest alone.
BLOB_START='<!-- bench-azurite blob output: scripts/bench-azurite.sh rewrites from here to the blob end marker -->'
BLOB_END='<!-- end of bench-azurite blob output -->'
write_blob_section() {
	local section="$WORK/blob-section.md" azblob
	azblob=$(go list -m -f '{{.Version}}' github.com/Azure/azure-sdk-for-go/sdk/storage/azblob 2>/dev/null || echo unknown)
	{
		echo "$BLOB_START"
		echo "## Blob measurements"
		echo
		echo "Generated by \`BENCH_SERVICES=blob scripts/bench-azurite.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) (commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(nproc) CPUs, Azurite $AZURITE_VERSION on disk, azblob $azblob)."
		echo
		[[ -z $BLOB_NOTE ]] || { echo "> $BLOB_NOTE"; echo; }
		echo "- Tablo (durable, on disk), Azurite's blob service (on disk, its default), the null server's"
		echo "  Blob listener and **disk** (write and fsync of the same bytes to a file: uploads only) run"
		echo "  each workload in turn, in the same rounds. Blob transfers are single-shot Put Blob and whole"
		echo "  Get Blob of one size through azblob; each uploader overwrites its own blob. In parentheses: the"
		echo "  fraction of the lower of the two ceilings (null, disk) measured beside it."
		echo "- Each run is bounded by $BLOB_OPS operations or $BLOB_DURATION (a 256 MiB operation in flight when"
		echo "  the time is up completes); blob-list lists a container of $BLOB_LIST empty blobs (one op = the"
		echo "  whole listing, 5,000 per page) at concurrency $BLOB_LIST_CONCURRENCY."
		echo "- Server efficiency counts operations per CPU-second of each server process (Tablo and Azurite"
		echo "  each run the Blob service alone in their own process)."
		echo
		sed 's/^### /#### /' "$WORK/blob-tables.md"
		echo
		echo '```sh'
		echo "npm install --prefix \$TMP/azurite azurite@$AZURITE_VERSION && ${AZURITE_BLOB_CMD:-} &"
		echo "go build -o /tmp/tablo ./cmd/tablo && ${TABLO_BLOB_CMD:-} &"
		echo "${NULL_BLOB_CMD:-} &"
		echo "# TABLO_BLOB, AZURITE_BLOB, NULL_BLOB: the development account with BlobEndpoint=http://127.0.0.1:<port>/devstoreaccount1"
		for cmd in "${BLOB_COMMANDS[@]}"; do
			echo "$cmd" | sed "s|$WORK/blob-results.jsonl|blob-results.jsonl|"
		done
		echo "$BENCH_NAME ${BLOB_REPORT_ARGS[*]} blob-results.jsonl"
		echo '```'
		echo
		echo "$BLOB_END"
	} >"$section"
	mkdir -p "$(dirname "$OUT")"
	touch "$OUT"
	if grep -qxF "$BLOB_START" "$OUT" && grep -qxF "$BLOB_END" "$OUT"; then
		local s e
		s=$(grep -nxF "$BLOB_START" "$OUT" | head -1 | cut -d: -f1)
		e=$(grep -nxF "$BLOB_END" "$OUT" | head -1 | cut -d: -f1)
		{ head -n "$((s - 1))" "$OUT"; cat "$section"; tail -n +"$((e + 1))" "$OUT"; } >"$WORK/out.md"
		cat "$WORK/out.md" >"$OUT"
	else
		{ echo; cat "$section"; } >>"$OUT"
	fi
	log "wrote the Blob section of $OUT"
}
if ! has_service table && ! has_service queue; then
	if has_service blob; then write_blob_section; fi
	exit 0
fi
ELAPSED=$(( $(date +%s) - START ))

REPORT_ARGS=(report --ceiling null)
[[ $TABLO_OK == 1 ]] && REPORT_ARGS+=(--ratio tablo/azurite)
touch "$RESULTS" "$QRESULTS"
if has_service table; then
	"${BENCH[@]}" "${REPORT_ARGS[@]}" "$RESULTS" >"$WORK/tables.md"
else
	echo "Table workloads were not run (BENCH_SERVICES=\"$SERVICES\")." >"$WORK/tables.md"
fi
"${BENCH[@]}" "${REPORT_ARGS[@]}" "$QRESULTS" >"$WORK/queue-tables.md"
AZQUEUE=$(go list -m -f '{{.Version}}' github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue 2>/dev/null || echo unknown)

# --- docs/benchmarks.md -------------------------------------------------------------------------
CPU_MODEL=$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || echo unknown)
MEM_GIB=$(awk '/^MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo)
AZTABLES=$(go list -m -f '{{.Version}}' github.com/Azure/azure-sdk-for-go/sdk/data/aztables 2>/dev/null || echo unknown)
AZCORE=$(go list -m -f '{{.Version}}' github.com/Azure/azure-sdk-for-go/sdk/azcore 2>/dev/null || echo unknown)
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
# The generated part sits between two marker lines; hand-written text before and after them
# (headline results, notes) is kept when the file is regenerated.
START='<!-- bench-azurite output: scripts/bench-azurite.sh rewrites from here to the end marker -->'
MARKER='<!-- end of bench-azurite output -->'
HEAD="# Benchmarks: Tablo vs Azurite"$'\n\n'"$START"
NOTES=""
if [[ -f $OUT ]] && grep -qxF "$MARKER" "$OUT" && grep -qxF "$START" "$OUT"; then
	# Line numbers, not sed addresses: the markers contain slashes.
	start_line=$(grep -nxF "$START" "$OUT" | head -1 | cut -d: -f1)
	end_line=$(grep -nxF "$MARKER" "$OUT" | head -1 | cut -d: -f1)
	HEAD=$(head -n "$start_line" "$OUT")
	NOTES=$(tail -n +"$((end_line + 1))" "$OUT")
fi
mkdir -p "$(dirname "$OUT")"
{
	printf '%s\n' "$HEAD"
	echo "## Measurements"
	echo
	echo "Generated by \`scripts/bench-azurite.sh\` on $(date -u +%Y-%m-%dT%H:%M:%SZ) in ${ELAPSED}s of measured runs."
	echo "Re-run it to refresh this file; numbers from a shared 2-core machine are noisy, so read ratios, not absolutes."
	echo
	echo "### Machine and versions"
	echo
	echo "| | |"
	echo "|---|---|"
	echo "| CPUs (nproc) | $(nproc) |"
	echo "| CPU model | $CPU_MODEL |"
	echo "| memory | $MEM_GIB GiB |"
	echo "| kernel | $(uname -sr) |"
	echo "| Go | $(go env GOVERSION) |"
	echo "| Node.js | $(node --version) |"
	echo "| Azurite | $AZURITE_VERSION (npm), in-memory |"
	echo "| Tablo | commit $COMMIT, default durable mode$([[ $TABLO_OK == 1 ]] || echo ' (skipped, see below)') |"
	echo "| client | aztables $AZTABLES, azqueue $AZQUEUE, azcore $AZCORE, retries off, keep-alive pool sized to the concurrency |"
	echo
	if [[ -n $TABLO_NOTE ]]; then
		echo "> $TABLO_NOTE"
		echo
	fi
	echo "### How it was measured"
	echo
	echo "- Client, servers and the null server share this machine; every request goes to 127.0.0.1."
	echo "- The **null server** answers every request with a canned response and does no work, so"
	echo "  its throughput estimates the most this client can drive on this machine. The other columns"
	echo "  show their throughput and, in parentheses, the fraction of that ceiling (measured in a"
	echo "  separate run, so it moves with the machine's load; see \"Reading the ceiling\")."
	echo "- **Server efficiency** is operations per CPU-second of the server process: its user+system"
	echo "  time from \`/proc/<pid>/stat\` over the measured phase only (not preload)."
	echo "- Each workload runs in a fresh table, bounded by $OPS operations or $DURATION, whichever"
	echo "  comes first; Tablo and Azurite run each workload in turn, $ROUNDS time(s) each (alternating"
	echo "  which goes first; figures are summed over the rounds). Preload: $PRELOAD entities;"
	echo "  Data property: $ENTITY_SIZE characters. p50/p99 are per operation (a batch of 100, one page"
	echo "  of up to 1,000, or a whole filtered scan)."
	echo
	echo "Workloads:"
	echo
	"${BENCH[@]}" --list | sed 's/^\([^ ]*\) */- `\1`: /'
	echo
	echo "### Results"
	echo
	sed 's/^### /#### /' "$WORK/tables.md"
	echo
	if has_service queue; then
		echo "### Queue results"
		echo
		if [[ ${AZURITE_QUEUE_MEMORY:-0} == 1 ]]; then
			echo "Queue workloads (Azurite's queue service is its own process, in memory; its CPU is that process's)."
		else
			echo "Queue workloads (Azurite's queue service is its own process, on disk, its default; its CPU is that process's)."
		fi
		echo "Each run puts $QUEUE_MESSAGES messages first where the workload reads them, and is bounded by"
		echo "$QUEUE_MESSAGES operations or $DURATION. One get-delete op is two requests, one pipeline op three."
		echo
		sed 's/^### /#### /' "$WORK/queue-tables.md"
		echo
	fi
	echo "### Exact commands"
	echo
	echo '```sh'
	echo "# servers"
	echo "npm install --prefix \$TMP/azurite azurite@$AZURITE_VERSION && $AZURITE_CMD &"
	[[ -n $TABLO_CMD ]] && echo "go build -o /tmp/tablo ./cmd/tablo && $TABLO_CMD &"
	echo "$NULL_CMD &"
	echo "# connection strings: AccountName=devstoreaccount1, the development key, TableEndpoint=http://127.0.0.1:<port>/devstoreaccount1"
	[[ -n $AZURITE_QUEUE_CMD ]] && echo "$AZURITE_QUEUE_CMD &"
	echo "# NULL=:$NULL_PORT AZURITE=:$AZURITE_PORT TABLO=:$TABLO_PORT; for queue runs they also name QueueEndpoint"
	echo "# (NULL=:$NULL_PORT AZURITE_QUEUE=:$AZURITE_QUEUE_PORT TABLO=:$TABLO_QUEUE_PORT)"
	for cmd in "${COMMANDS[@]}"; do
		echo "$cmd" | sed "s|$WORK/results.jsonl|results.jsonl|; s|$WORK/queue-results.jsonl|queue-results.jsonl|"
	done
	echo "$BENCH_NAME ${REPORT_ARGS[*]} results.jsonl"
	has_service queue && echo "$BENCH_NAME ${REPORT_ARGS[*]} queue-results.jsonl"
	echo '```'
	echo
	echo "$MARKER"
	[[ -z $NOTES ]] || printf '%s\n' "$NOTES"
} >"$OUT"
log "wrote $OUT"
if has_service blob; then write_blob_section; fi
