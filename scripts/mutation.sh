#!/usr/bin/env bash
# Mutation testing of the core packages with gremlins (not part of CI: it is slow).
#
#   scripts/mutation.sh [--integration] [package ...]
#
# Each package is mutated on its own (cheap packages first) and its mutants are judged by the
# package's own tests; with --integration, the packages the end-to-end tests carry (server,
# colcache) are judged by the whole suite instead (much slower: every mutant runs it all).
# Results go to $OUT (default ./mutation-out): one JSON file and one log per package, and
# summary.md with the test efficacy (killed / (killed + lived)) of each. The lived mutants
# of a package are listed in its log (grep LIVED). docs/testing.md explains the figures.
#
# Environment: WORKERS (default 1) keeps the load modest on a shared machine; TIMEOUT_COEF
# (default 10) stretches gremlins' per-mutant timeout for slow tests; EXCLUDE, a regular
# expression of file paths, leaves files out (gremlins --exclude-files), e.g. to run only the
# files an earlier, cut-short run did not reach: EXCLUDE='(acl|authn|batch|body)\.go$'.
# Never pass gremlins --test-cpu: v0.6.0 hands "-cpu N" to go test as one argument, every test
# run then fails on the unknown flag, and every mutant is reported killed.
set -euo pipefail
cd "$(dirname "$0")/.."

GREMLINS_VERSION=v0.6.0
integration=0
if [ "${1:-}" = "--integration" ]; then
  integration=1
  shift
fi
# Cheapest first, so that a run cut short still has the quick packages.
pkgs=("$@")
if [ ${#pkgs[@]} -eq 0 ]; then
  pkgs=(azerr keys config tagquery store/stripelock auth serviceprops httpserve batch query entity
    colcache store/pebble table server partition queuewire queue blobwire blob)
  # The PostgreSQL engine's tests need a server; without one they skip, and every mutant lives.
  if [ -n "${TABLO_TEST_POSTGRES_URL:-}" ]; then
    pkgs+=(store/postgres)
  fi
fi
integration_pkgs=" server colcache "

OUT="${OUT:-mutation-out}"
mkdir -p "$OUT"
# Installed into $OUT/bin at exactly the pinned version (a cached no-op after the first run).
GOBIN="$(cd "$OUT" && pwd)/bin" GOFLAGS= go install "github.com/go-gremlins/gremlins/cmd/gremlins@$GREMLINS_VERSION"
GOBIN="$(cd "$OUT" && pwd)/bin"

summary="$OUT/summary.md"
{
  echo "| package | mode | killed | lived | timed out | not covered | not viable | efficacy | minutes |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|"
} > "$summary"
for p in "${pkgs[@]}"; do
  name="${p//\//-}"
  args=(--workers "${WORKERS:-1}" --timeout-coefficient "${TIMEOUT_COEF:-10}" -o "$OUT/$name.json")
  if [ -n "${EXCLUDE:-}" ]; then
    args+=(--exclude-files "$EXCLUDE")
  fi
  mode=own
  if [ $integration = 1 ] && [[ "$integration_pkgs" == *" $p "* ]]; then
    args+=(--integration)
    mode=integration
  fi
  echo "== $p ($mode tests)"
  start=$(date +%s)
  "$GOBIN/gremlins" unleash "${args[@]}" "./internal/$p" > "$OUT/$name.log" 2>&1 || true
  mins=$(( ($(date +%s) - start + 30) / 60 ))
  python3 - "$OUT/$name.json" "$p" "$mode" "$mins" >> "$summary" <<'PY'
import json, sys
path, pkg, mode, mins = sys.argv[1:]
try:
    r = json.load(open(path))
except (OSError, ValueError):
    print(f"| {pkg} | {mode} | — | — | — | — | — | failed | {mins} |")
    sys.exit()
st = {}
for f in r.get("files", []):
    for m in f.get("mutations", []):
        st[m["status"]] = st.get(m["status"], 0) + 1
k, l = st.get("KILLED", 0), st.get("LIVED", 0)
eff = f"{100 * k / (k + l):.1f} %" if k + l else "n/a"
print(f"| {pkg} | {mode} | {k} | {l} | {st.get('TIMED OUT', 0)} | {st.get('NOT COVERED', 0)} | {st.get('NOT VIABLE', 0)} | {eff} | {mins} |")
PY
  tail -1 "$summary"
done
echo "summary: $summary"
