#!/usr/bin/env bash
# Drives a Tablo server's Queue service through az CLI (az storage queue|message) and exits
# non-zero on any mismatch. Usage: TABLO_CONNECTION_STRING='...;QueueEndpoint=...;' bash compat-queue-az.sh
set -uo pipefail
cs="${TABLO_CONNECTION_STRING:?set TABLO_CONNECTION_STRING}"
q="az-queue-$RANDOM$RANDOM"
passed=0
failed=0
check() {
	local name=$1
	shift
	if out=$("$@" 2>&1); then
		passed=$((passed + 1))
		echo "PASS $name"
	else
		failed=$((failed + 1))
		echo "FAIL $name: $out"
	fi
}
az_q() { az storage "$@" --connection-string "$cs" --only-show-errors; }
check "queue create" bash -c "$(declare -f az_q); cs='$cs'; az_q queue create -n $q --metadata owner=az | grep -q '\"created\": true'"
check "message put" bash -c "$(declare -f az_q); cs='$cs'; az_q message put -q $q --content hello >/dev/null"
check "message peek" bash -c "$(declare -f az_q); cs='$cs'; az_q message peek -q $q | grep -q hello"
check "message get and delete" bash -c "$(declare -f az_q); cs='$cs'
	out=\$(az_q message get -q $q -o tsv --query '[0].[id,popReceipt]') || exit 1
	id=\$(echo \"\$out\" | sed -n 1p); pop=\$(echo \"\$out\" | sed -n 2p)
	az_q message delete -q $q --id \"\$id\" --pop-receipt \"\$pop\""
check "queue metadata" bash -c "$(declare -f az_q); cs='$cs'; az_q queue metadata show -n $q | grep -q owner"
check "queue list" bash -c "$(declare -f az_q); cs='$cs'; az_q queue list --prefix az-queue- | grep -q $q"
check "queue delete" bash -c "$(declare -f az_q); cs='$cs'; az_q queue delete -n $q | grep -q '\"deleted\": true'"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
