#!/usr/bin/env bash
# Builds static tablo binaries with the version stamped in, into dist/:
#
#   scripts/release.sh [VERSION] [OS/ARCH ...]
#
# VERSION defaults to `git describe --tags --always --dirty`; the targets default to
# linux, darwin and windows on amd64 and arm64. Each archive holds the binary, LICENSE,
# THIRD_PARTY_LICENSES.md and README.md; dist/SHA256SUMS lists their checksums.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo devel)}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
fi
commit=$(git rev-parse HEAD 2>/dev/null || true)
pkg=github.com/tablo/tablo/internal/buildinfo
ldflags="-s -w -X ${pkg}.version=${version} -X ${pkg}.commit=${commit}"

rm -rf dist
mkdir -p dist
for target in "${targets[@]}"; do
  os=${target%/*}
  arch=${target#*/}
  name=tablo-${version}-${os}-${arch}
  exe=tablo
  [ "$os" = windows ] && exe=tablo.exe
  echo "building $name"
  mkdir -p "dist/$name"
  # CGO_ENABLED=0: a static binary that needs no C library on the target.
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags "$ldflags" -o "dist/$name/$exe" ./cmd/tablo
  cp LICENSE THIRD_PARTY_LICENSES.md README.md "dist/$name/"
  if [ "$os" = windows ]; then
    (cd dist && zip -qr "$name.zip" "$name")
  else
    tar -C dist -czf "dist/$name.tar.gz" "$name"
  fi
  rm -rf "dist/${name:?}"
done
(cd dist && sha256sum -- *.tar.gz *.zip 2>/dev/null > SHA256SUMS || true)
ls -l dist
