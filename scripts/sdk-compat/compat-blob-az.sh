#!/usr/bin/env bash
# Drives a Tablo server's Blob service through az CLI (az storage container|blob) and exits
# non-zero on any mismatch.
# Usage: TABLO_BLOB_CONNECTION_STRING='...;BlobEndpoint=...;' bash compat-blob-az.sh
#
# Each check runs in its own bash with -e, so any failing command or comparison fails it; each
# prints PASS or FAIL and the last line counts them.
set -uo pipefail
# az would start a telemetry upload after each command.
export AZURE_CORE_COLLECT_TELEMETRY=no
export cs="${TABLO_BLOB_CONNECTION_STRING:?set TABLO_BLOB_CONNECTION_STRING}"
export endpoint
endpoint=$(sed -n 's/.*BlobEndpoint=\([^;]*\).*/\1/p' <<<"$cs")
export c="az-blob-$RANDOM$RANDOM"
export tmp
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

azs() { az storage "$@" --connection-string "$cs" --only-show-errors; }
# want NAME GOT EXPECTED: fails with both values shown when they differ.
want() {
	if [ "$2" != "$3" ]; then
		echo "$1: got [$2], want [$3]" >&2
		return 1
	fi
}
export -f azs want

# check NAME FN runs FN in its own bash with -e and writes "PASS NAME (Ns)" or "FAIL NAME:
# output" to $tmp/result.FN; report prints the results in the order given and counts them.
check() {
	local name=$1 fn=$2 start=$SECONDS out
	if out=$(bash -euo pipefail -c "$fn" 2>&1); then
		echo "PASS $name ($((SECONDS - start))s)" >"$tmp/result.$fn"
	else
		echo "FAIL $name: $out" >"$tmp/result.$fn"
	fi
}
passed=0
failed=0
report() {
	for fn in "$@"; do
		cat "$tmp/result.$fn"
		if grep -q '^PASS' "$tmp/result.$fn"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	done
}

containers() {
	want create "$(azs container create -n "$c" --metadata owner=az -o tsv --query created)" true
	want "create again" "$(azs container create -n "$c" -o tsv --query created)" false
	want "exists, metadata" "$(azs container show -n "$c" -o tsv --query metadata.owner)" az
	azs container metadata update -n "$c" --metadata purpose=compat n=1 >/dev/null
	want "list with metadata" "$(azs container list --prefix "$c" --include-metadata -o tsv --query '[].[name,metadata.purpose,metadata.n]' | tr '\n\t' '  ')" "$c compat 1 "
	local other="$c-del"
	azs container create -n "$other" >/dev/null
	want delete "$(azs container delete -n "$other" -o tsv --query deleted)" true
	want "delete missing" "$(azs container delete -n "$other" -o tsv --query deleted)" false
}
export -f containers

small_blob() {
	printf 'hello from az\n' >"$tmp/hello.txt"
	azs blob upload -c "$c" -n dir/hello.txt -f "$tmp/hello.txt" --content-type text/plain --metadata author=az --no-progress >/dev/null
	azs blob download -c "$c" -n dir/hello.txt -f "$tmp/hello.out" --no-progress >/dev/null
	cmp "$tmp/hello.txt" "$tmp/hello.out"
	want exists "$(azs blob exists -c "$c" -n dir/hello.txt -o tsv --query exists)" true
	# az uploads with If-None-Match: * unless --overwrite: the second upload must be refused.
	if azs blob upload -c "$c" -n dir/hello.txt -f "$tmp/hello.txt" --no-progress >/dev/null 2>"$tmp/err"; then
		echo "upload over an existing blob without --overwrite succeeded" >&2
		return 1
	fi
	grep -q BlobAlreadyExists "$tmp/err"
	azs blob upload -c "$c" -n dir/hello.txt -f "$tmp/hello.txt" --overwrite --content-type text/plain --no-progress >/dev/null
}
export -f small_blob

properties() {
	local show
	show=$(azs blob show -c "$c" -n dir/hello.txt -o tsv --query '[properties.contentLength, properties.contentSettings.contentType, properties.blobType, properties.contentSettings.contentMd5]' | tr '\n' ' ')
	want show "$show" "14 text/plain BlockBlob $(openssl md5 -binary "$tmp/hello.txt" | base64) "
	# Set Blob Properties replaces every content header: az sends back the ones it read.
	azs blob update -c "$c" -n dir/hello.txt --content-type application/x-az --content-cache-control no-cache >/dev/null
	azs blob metadata update -c "$c" -n dir/hello.txt --metadata k1=v1 k2=v2 >/dev/null
	azs blob set-tier -c "$c" -n dir/hello.txt --tier Cool >/dev/null
	show=$(azs blob show -c "$c" -n dir/hello.txt -o tsv --query '[properties.contentSettings.contentType, properties.contentSettings.cacheControl, metadata.k1, metadata.k2, properties.blobTier]' | tr '\n' ' ')
	want "after update" "$show" "application/x-az no-cache v1 v2 Cool "
}
export -f properties

large_blob() {
	# Above az's 64 MiB single-put limit: Put Block (4 MiB each) + Put Block List; the
	# download reads past its 32 MiB first GET in ranged chunks.
	head -c $((66 << 20)) /dev/urandom >"$tmp/big.bin"
	azs blob upload -c "$c" -n big/big.bin -f "$tmp/big.bin" --max-connections 4 --no-progress >/dev/null
	# A committed block list has no Content-MD5 (a single Put Blob would have one).
	want "size and no MD5" "$(azs blob show -c "$c" -n big/big.bin -o tsv --query '[properties.contentLength, properties.contentSettings.contentMd5]' | tr '\n' ' ')" "$((66 << 20)) None "
	azs blob download -c "$c" -n big/big.bin -f "$tmp/big.out" --max-connections 4 --no-progress >/dev/null
	cmp "$tmp/big.bin" "$tmp/big.out"
	rm -f "$tmp/big.bin" "$tmp/big.out"
}
export -f large_blob

batch() {
	mkdir -p "$tmp/src/a/b" "$tmp/src/c"
	printf 'one' >"$tmp/src/one.txt"
	printf 'two' >"$tmp/src/a/two.txt"
	printf 'three' >"$tmp/src/a/b/three.txt"
	head -c 300000 /dev/urandom >"$tmp/src/c/bin.dat"
	azs blob upload-batch -d "$c" -s "$tmp/src" --destination-path batch --no-progress >/dev/null
	want "listed" "$(azs blob list -c "$c" --prefix batch/ -o tsv --query '[].name' | tr '\n' ' ')" "batch/a/b/three.txt batch/a/two.txt batch/c/bin.dat batch/one.txt "
	want "delimiter" "$(azs blob list -c "$c" --prefix batch/ --delimiter / -o tsv --query '[].name' | tr '\n' ' ')" "batch/a/ batch/c/ batch/one.txt "
	mkdir -p "$tmp/dst"
	azs blob download-batch -s "$c" -d "$tmp/dst" --pattern 'batch/*' --no-progress >/dev/null
	diff -r "$tmp/src" "$tmp/dst/batch"
	azs blob delete-batch -s "$c" --pattern 'batch/a/*' >/dev/null
	want "after delete-batch" "$(azs blob list -c "$c" --prefix batch/ -o tsv --query '[].name' | tr '\n' ' ')" "batch/c/bin.dat batch/one.txt "
}
export -f batch

sas() {
	local expiry sas_blob sas_cont
	expiry=$(date -u -d '+1 hour' +%Y-%m-%dT%H:%MZ)
	sas_blob=$(azs blob generate-sas -c "$c" -n dir/hello.txt --permissions r --expiry "$expiry" -o tsv)
	az storage blob download --blob-url "$endpoint/$c/dir/hello.txt?$sas_blob" -f "$tmp/sas.out" --only-show-errors --no-progress >/dev/null
	cmp "$tmp/hello.txt" "$tmp/sas.out"
	if az storage blob upload --blob-url "$endpoint/$c/dir/sas-write.txt?$sas_blob" -f "$tmp/hello.txt" --only-show-errors --no-progress >/dev/null 2>"$tmp/err"; then
		echo "write with a read-only SAS succeeded" >&2
		return 1
	fi
	# az words a 403 as "Authentication failure" whatever its code.
	grep -q "Authentication failure" "$tmp/err"
	sas_cont=$(azs container generate-sas -n "$c" --permissions rwl --expiry "$expiry" -o tsv)
	az storage blob upload -c "$c" -n dir/via-sas.txt -f "$tmp/hello.txt" --blob-endpoint "$endpoint" --sas-token "$sas_cont" --only-show-errors --no-progress >/dev/null
	want "list with a container SAS" "$(az storage blob list -c "$c" --prefix dir/ --blob-endpoint "$endpoint" --sas-token "$sas_cont" --only-show-errors -o tsv --query '[].name' | tr '\n' ' ')" "dir/hello.txt dir/via-sas.txt "
}
export -f sas

delete_all() {
	azs blob delete -c "$c" -n dir/hello.txt >/dev/null
	want "exists after delete" "$(azs blob exists -c "$c" -n dir/hello.txt -o tsv --query exists)" false
	want "container delete" "$(azs container delete -n "$c" -o tsv --query deleted)" true
}
export -f delete_all

check "container create, exists, metadata, list, delete" containers
# Each az command starts the CLI anew (about a second of CPU): the three independent chains
# below run side by side, each on its own blobs of the container.
(
	check "blob upload, download, exists, no overwrite" small_blob
	check "blob properties, content settings, metadata, tier" properties
	check "blob and container SAS" sas
) &
check "66 MiB upload in blocks and chunked download" large_blob &
check "upload-batch, list with delimiter, download-batch, delete-batch" batch &
wait
check "blob and container delete" delete_all
report containers small_blob properties sas large_blob batch delete_all
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
