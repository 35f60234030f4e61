#!/usr/bin/env bash
# scale-check.sh: how Tablo scales with table size. For each table size N it starts a durable Tablo on
# a fresh data directory, loads N entities of ~1 KiB into one partition of one table, and
# measures, with the official Go SDK (`tablo bench`):
#   - the load rate (100-entity transactions, several in flight),
#   - paging through the partition, 1,000 entities per page,
#   - a filtered scan on a non-key property that matches 1%,
#   - point gets,
#   - server RSS (VmRSS after load, after the queries, VmHWM) and on-disk size (du -sb),
#   - restart time, from process start to the first successful point query, after SIGTERM and
#     after SIGKILL (the SIGKILL follows a few seconds of writes, so the WAL has work to replay),
#   - the peak RSS of the restarted server after the same queries again.
# It writes a markdown section to docs/scale.md (SCALE_OUT) between the lines
# "<!-- scale-check output: ... -->" and "<!-- end of scale-check output -->"; the hand-written
# text before and after them is kept. It also reports how the per-CPU-second costs change from
# the smallest size to the others (1.00 = as cheap per entity as at the smallest size).
#
# Everything runs on 127.0.0.1; every bench run is bounded by an op count and a duration; the
# server and the temp directory are removed on exit. The full run (10 k, 100 k, 1 M) takes a few
# minutes on 2 cores.
#
# Environment knobs:
#   SIZES="10000 100000 1000000"   table sizes, in order
#   SCALE_ENTITY_SIZE=1000         characters of each entity's Data property (~1 KiB entities)
#   SCALE_PORT=10402 SCALE_OUT=docs/scale.md
#   SCALE_PAGE_MIN=200000          entities paged at least per size (small tables are paged repeatedly)
#   SCALE_SCAN_MIN=5000000         entities scanned at least per size (whole-table scans, repeated,
#                                  at least 3), after one unmeasured warm-up scan that lets the
#                                  column cache build (SCALE_SCAN_WARMUP=0 measures cold scans)
#   SCALE_GET_DURATION=5s SCALE_GET_CONCURRENCY=8 SCALE_LOAD_CONCURRENCY=8
#   SCALE_RESTARTS=3               restarts measured per signal (the table shows the slowest)
#   SCALE_PPROF=127.0.0.1:6060     if set, the server serves net/http/pprof there and heap
#                                  profiles are saved next to the report (scale-heap-N.pb.gz)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

SIZES=${SIZES:-"10000 100000 1000000"}
ENTITY_SIZE=${SCALE_ENTITY_SIZE:-1000}
PORT=${SCALE_PORT:-10402}
OUT=${SCALE_OUT:-docs/scale.md}
PAGE_MIN=${SCALE_PAGE_MIN:-200000}
SCAN_MIN=${SCALE_SCAN_MIN:-5000000}
SCAN_WARMUP=${SCALE_SCAN_WARMUP:-1}
GET_DURATION=${SCALE_GET_DURATION:-5s}
GET_CONCURRENCY=${SCALE_GET_CONCURRENCY:-8}
LOAD_CONCURRENCY=${SCALE_LOAD_CONCURRENCY:-8}
RESTARTS=${SCALE_RESTARTS:-3}
PPROF=${SCALE_PPROF:-}

ACCOUNT=devstoreaccount1
DEV_KEY='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
CONN="DefaultEndpointsProtocol=http;AccountName=$ACCOUNT;AccountKey=$DEV_KEY;TableEndpoint=http://127.0.0.1:$PORT/$ACCOUNT;"

for tool in go curl openssl jq du awk; do
	command -v "$tool" >/dev/null || { echo "scale-check: needs $tool" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/tablo-scale.XXXXXX)
SERVER_PID=""
cleanup() {
	if [[ -n $SERVER_PID ]]; then
		kill -TERM "$SERVER_PID" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$SERVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "scale-check: $(date +%T) $*" >&2; }
now_ns() { date +%s%N; }

log "building tablo"
go build -o "$WORK/tablo" ./cmd/tablo
TABLO="$WORK/tablo"

# --- server lifecycle ---------------------------------------------------------------------------

# start_server DIR: start Tablo in the background; sets SERVER_PID and START_NS (just before exec).
start_server() {
	local args=(--data-dir "$1" --host 127.0.0.1 --table-port "$PORT" --services table --log-level warn)
	[[ -n $PPROF ]] && args+=(--pprof "$PPROF")
	START_NS=$(now_ns)
	"$TABLO" "${args[@]}" >>"$WORK/server.log" 2>&1 &
	SERVER_PID=$!
	# Disowned: bash still reaps it, but prints no "Killed" notice; stop_server polls instead of wait.
	disown "$SERVER_PID"
}

# stop_server SIGNAL: send SIGNAL and wait (at most 60 s) for the process to exit.
stop_server() {
	kill "-$1" "$SERVER_PID"
	local i
	for ((i = 0; i < 600; i++)); do
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		log "server did not exit after SIG$1"
		kill -KILL "$SERVER_PID"
		sleep 0.5
	fi
	SERVER_PID=""
}

# probe_setup PATH: sign a GET of PATH (below the account) with Shared Key Lite once, so each
# poll is one curl and nothing else. The signature stays valid for 15 minutes.
probe_setup() {
	PROBE_URL="http://127.0.0.1:$PORT/$ACCOUNT$1"
	PROBE_DATE=$(LC_ALL=C date -u '+%a, %d %b %Y %H:%M:%S GMT')
	local hexkey
	hexkey=$(printf '%s' "$DEV_KEY" | base64 -d | od -An -vtx1 | tr -d ' \n')
	PROBE_SIG=$(printf '%s\n%s' "$PROBE_DATE" "/$ACCOUNT/$ACCOUNT$1" |
		openssl dgst -sha256 -mac HMAC -macopt "hexkey:$hexkey" -binary | base64)
}

probe() {
	curl -s -o /dev/null -w '%{http_code}' --max-time 2 \
		-H "x-ms-date: $PROBE_DATE" -H "x-ms-version: 2019-02-02" \
		-H "Accept: application/json;odata=nometadata" \
		-H "Authorization: SharedKeyLite $ACCOUNT:$PROBE_SIG" "$PROBE_URL" 2>/dev/null || true
}

# wait_ready SECONDS: poll the probe until it answers 200; prints milliseconds since START_NS.
wait_ready() {
	local deadline=$(($(now_ns) + $1 * 1000000000)) code
	while :; do
		code=$(probe)
		if [[ $code == 200 ]]; then
			echo $((($(now_ns) - START_NS) / 1000000))
			return 0
		fi
		kill -0 "$SERVER_PID" 2>/dev/null || { log "server exited; log:"; tail -20 "$WORK/server.log" >&2; return 1; }
		(($(now_ns) < deadline)) || { log "no successful query within $1 s (last HTTP $code)"; return 1; }
		sleep 0.005
	done
}

# num N: N with thousands separators (independent of the locale).
num() { printf '%s' "$1" | rev | sed -E 's/([0-9]{3})/\1,/g; s/,$//' | rev; }

proc_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
mb() { awk -v kb="$1" 'BEGIN { printf "%.0f", kb / 1024 }'; }

# --- one size -----------------------------------------------------------------------------------

bench() { "$TABLO" bench --conn "$CONN" --label "$LABEL" --pid "$SERVER_PID" --json "$JSON" "$@" >>"$WORK/bench.log"; }

ROWS=()     # one markdown row per size
COMMANDS=() # the exact bench commands of the last size, for the report
declare -A PAGE_CPU SCAN_CPU

run_size() {
	local n=$1 dir="$WORK/data-$1" table="scale$1"
	LABEL="tablo-$n"
	JSON="$WORK/$n.jsonl"
	mkdir -p "$dir"
	log "N=$n: starting server"
	start_server "$dir"
	probe_setup "/Tables"
	wait_ready 30 >/dev/null

	local common=(--table "$table" --single-partition --unique-data --preload "$n" --entity-size "$ENTITY_SIZE")
	local pages=$(((n > PAGE_MIN ? n : PAGE_MIN) / 1000))
	local scans=$(((SCAN_MIN + n - 1) / n))
	((scans >= 3)) || scans=3
	local load=("${common[@]}" --preload-only --concurrency "$LOAD_CONCURRENCY" --op-timeout 2m)
	local page=("${common[@]}" --skip-preload --workloads page-partition --concurrency 1 --ops "$pages" --duration 10m)
	local scan=("${common[@]}" --skip-preload --workloads filter-scan --concurrency 1 --ops "$scans" --duration 10m --op-timeout 5m)
	local get=("${common[@]}" --skip-preload --workloads get --concurrency "$GET_CONCURRENCY" --duration "$GET_DURATION")
	local write=("${common[@]}" --skip-preload --workloads upsert-merge --concurrency "$GET_CONCURRENCY" --duration 3s)
	COMMANDS=("tablo bench --conn \"\$CONN\" --pid \$PID ${load[*]}"
		"tablo bench --conn \"\$CONN\" --pid \$PID ${page[*]}"
		"tablo bench --conn \"\$CONN\" --pid \$PID ${scan[*]}"
		"tablo bench --conn \"\$CONN\" --pid \$PID ${get[*]}"
		"tablo bench --conn \"\$CONN\" --pid \$PID ${write[*]}   # then kill -KILL \$PID")

	log "N=$n: loading"
	bench "${load[@]}"
	local rss_load disk
	rss_load=$(proc_kb "$SERVER_PID" VmRSS)
	disk=$(du -sb "$dir" | cut -f1)

	log "N=$n: paging $pages pages"
	bench "${page[@]}"
	if ((SCAN_WARMUP)); then
		# One scan the report does not count; the column cache builds in the background
		# after it (a full scan of the table), so give the build time to finish.
		log "N=$n: warm-up scan"
		"$TABLO" bench --conn "$CONN" "${common[@]}" --skip-preload --workloads filter-scan --concurrency 1 --ops 1 --duration 10m --op-timeout 5m >>"$WORK/bench.log"
		sleep $((2 + n / 500000))
	fi
	log "N=$n: $scans filtered scan(s)"
	bench "${scan[@]}"
	log "N=$n: point gets for $GET_DURATION"
	bench "${get[@]}"
	local rss_query hwm
	rss_query=$(proc_kb "$SERVER_PID" VmRSS)
	hwm=$(proc_kb "$SERVER_PID" VmHWM)
	if [[ -n $PPROF ]]; then
		curl -s -o "$(dirname "$OUT")/scale-heap-$n.pb.gz" "http://$PPROF/debug/pprof/heap" || true
	fi

	# Restarts: the probe reads the last loaded entity, so success means the table is there.
	probe_setup "/$table(PartitionKey='page',RowKey='r$(printf '%08d' $((n - 1)))')"
	local term_ms=() kill_ms=() i ms rss_restart
	for ((i = 0; i < RESTARTS; i++)); do
		stop_server TERM
		start_server "$dir"
		ms=$(wait_ready 60)
		term_ms+=("$ms")
	done
	rss_restart=$(proc_kb "$SERVER_PID" VmRSS)
	for ((i = 0; i < RESTARTS; i++)); do
		bench "${write[@]}"
		stop_server KILL
		start_server "$dir"
		ms=$(wait_ready 60)
		kill_ms+=("$ms")
	done
	log "N=$n: restart after SIGTERM ${term_ms[*]} ms, after SIGKILL ${kill_ms[*]} ms"
	# RSS depends on the process's history (glibc arenas), so measure a second process too.
	log "N=$n: the same queries on the restarted server"
	local json_main=$JSON
	JSON="$WORK/$n-restarted.jsonl"
	bench "${page[@]}"
	bench "${scan[@]}"
	bench "${get[@]}"
	JSON=$json_main
	local hwm2
	hwm2=$(proc_kb "$SERVER_PID" VmHWM)
	stop_server TERM

	# Pull the numbers out of the JSON lines.
	local q='def r(w): map(select(.workload == w)) | last;'
	local loadr pager scanr getr
	loadr=$(jq -rs "$q"' r("preload") | "\(.entities_per_s|round) | \(.entities_per_cpu_s|round)"' "$JSON")
	pager=$(jq -rs "$q"' r("page-partition") | "\(.entities_per_s|round) | \(.entities_per_cpu_s|round)"' "$JSON")
	scanr=$(jq -rs --argjson n "$n" "$q"' r("filter-scan") | "\(.ops*$n/.seconds|round) | \(.ops*$n/.server_cpu_s|round)"' "$JSON")
	getr=$(jq -rs "$q"' r("get") | "\(.ops_per_s|round) | \(.ops_per_cpu_s|round) | \(.p50_ms*100|round/100) / \(.p99_ms*100|round/100)"' "$JSON")
	PAGE_CPU[$n]=$(jq -rs "$q"' r("page-partition") | .entities_per_cpu_s' "$JSON")
	SCAN_CPU[$n]=$(jq -rs --argjson n "$n" "$q"' r("filter-scan") | .ops*$n/.server_cpu_s' "$JSON")
	local errors
	errors=$(cat "$JSON" "$WORK/$n-restarted.jsonl" | jq -s 'map(.errors) | add')
	[[ $errors == 0 ]] || log "N=$n: $errors failed operations (see the JSON lines)"

	local max_term max_kill
	max_term=$(printf '%s\n' "${term_ms[@]}" | sort -n | tail -1)
	max_kill=$(printf '%s\n' "${kill_ms[@]}" | sort -n | tail -1)
	ROWS+=("| $(num "$n") | $loadr | $(mb "$rss_load") / $(mb "$rss_query") / $(mb "$hwm") | $(mb "$rss_restart") / $(mb "$hwm2") | $(awk -v b="$disk" 'BEGIN { printf "%.0f", b / 1e6 }') | $max_term / $max_kill | $pager | $scanr | $getr | $errors |")
	LAST_HWM_MB=$(mb $((hwm > hwm2 ? hwm : hwm2)))
	LAST_TERM=$max_term
	LAST_KILL=$max_kill
	cat "$JSON" >>"$WORK/all.jsonl"
	rm -rf "$dir"
}

read -r -a SIZE_LIST <<<"$SIZES"
for n in "${SIZE_LIST[@]}"; do
	[[ $n =~ ^[0-9]+$ && $n -ge 1000 && $n -le 10000000 ]] || { echo "scale-check: bad size $n" >&2; exit 1; }
	run_size "$n"
done

# --- report -------------------------------------------------------------------------------------

first=${SIZE_LIST[0]}
last=${SIZE_LIST[-1]}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
max_restart=$((LAST_TERM > LAST_KILL ? LAST_TERM : LAST_KILL))

cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mem_total=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)

START='<!-- scale-check output: scripts/scale-check.sh rewrites from here to the end marker -->'
MARKER='<!-- end of scale-check output -->'
HEAD="# Scale"$'\n'"$START"
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
	echo "## Results"
	echo
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') by \`scripts/scale-check.sh\` (SIZES=\"$SIZES\")."
	echo "Machine: $(nproc) cores ($cpu_model), $mem_total RAM, $(go version | cut -d' ' -f3-4)," \
		"Linux $(uname -r); load average at the end: $loadavg. Client and server share the cores," \
		"and other work may have run at the same time: compare the per-CPU-second columns and ratios" \
		"rather than wall-clock rates."
	echo
	echo "Each size runs on a fresh durable server (\`tablo --data-dir DIR --host 127.0.0.1 --table-port $PORT --services table --log-level warn\`)" \
		"and one table holding N entities in one partition; each entity has a $ENTITY_SIZE-character" \
		"random Data string (\`--unique-data\`: incompressible, so on-disk size is that of real data)," \
		"a Category (1% match the scan's filter) and an Int32, ~1.1 KiB as JSON."
	echo
	echo "| entities | load ent/s | load ent/cpu-s | RSS MB: loaded / queried / peak | RSS MB restarted: idle / peak after queries | disk MB | restart ms: SIGTERM / SIGKILL | paging ent/s | paging ent/cpu-s | scan ent/s | scan ent/cpu-s | get ops/s | get ops/cpu-s | get p50 / p99 ms | errors |"
	echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	printf '%s\n' "${ROWS[@]}"
	echo
	echo "- *load*: 100-entity transactions, $LOAD_CONCURRENCY in flight, through the SDK. *paging*: one client" \
		"pages the partition 1,000 entities per page (at least $PAGE_MIN entities per size, so small tables" \
		"are paged several times). *scan*: \`Category eq 'c07'\` over the whole table (matches 1%), one" \
		"client, repeated to at least $SCAN_MIN entities scanned (and 3 scans), after one unmeasured warm-up scan (SCALE_SCAN_WARMUP=$SCAN_WARMUP) that lets the column cache build; ent/s counts entities *scanned*." \
		"*get*: point gets of random keys, $GET_CONCURRENCY clients, $GET_DURATION. *cpu-s*: server CPU" \
		"(user+system from /proc/PID/stat) over the phase."
	echo "- *RSS*: VmRSS after the load, VmRSS after the queries, VmHWM (peak) of the same process;" \
		"then VmRSS of a restarted server before any query, and the peak (VmHWM) of the last" \
		"restarted server after it ran the paging, scan and get phases again." \
		"*disk*: \`du -sb\` of the data dir after the load."
	echo "- *restart*: from just before exec to the first 200 of a signed point GET of the last loaded" \
		"entity (curl polling every 5 ms), the slowest of $RESTARTS. SIGKILL restarts follow 3 s of" \
		"upsert-merge writes ($GET_CONCURRENCY clients), so the WAL has writes to replay."
	echo
	echo "How the per-CPU-second figures change with size (1.00 = as cheap per entity as at $(num "$first")):"
	echo
	if ((${#SIZE_LIST[@]} > 2)); then
		echo "| measure | $(num "${SIZE_LIST[1]}") ÷ $(num "$first") | $(num "$last") ÷ $(num "$first") | $(num "$last") ÷ $(num "${SIZE_LIST[1]}") |"
		echo "|---|---:|---:|---:|"
	else
		echo "| measure | $(num "$last") ÷ $(num "$first") |"
		echo "|---|---:|"
	fi
	for m in PAGE SCAN; do
		declare -n cpu="${m}_CPU"
		label="paging, entities per server CPU-second"
		[[ $m == SCAN ]] && label="filtered scan, entities per server CPU-second"
		if ((${#SIZE_LIST[@]} > 2)); then
			mid=${SIZE_LIST[1]}
			row="| $label | $(ratio "${cpu[$mid]}" "${cpu[$first]}") | $(ratio "${cpu[$last]}" "${cpu[$first]}") | $(ratio "${cpu[$last]}" "${cpu[$mid]}") |"
		else
			row="| $label | $(ratio "${cpu[$last]}" "${cpu[$first]}") |"
		fi
		echo "$row"
		unset -n cpu
	done
	echo
	echo "At $(num "$last"): peak RSS $LAST_HWM_MB MB; slowest restart to the first successful query $max_restart ms."
	echo
	echo "Commands (for N=$last; \`\$CONN\` is the development account's connection string for port $PORT):"
	echo
	echo '```sh'
	printf '%s\n' "${COMMANDS[@]}"
	echo '```'
	echo
	echo "$MARKER"
	[[ -z $NOTES ]] || printf '%s\n' "$NOTES"
} >"$OUT"
log "wrote $OUT"
cat "$OUT"
