#!/usr/bin/env bash
# Builds the kpt catalog functions the Go module proxy serves, one module
# per function and version (hack/catalog/<function>-<version>), into OUT
# (default bin/catalog), with config.yaml: Porch's function runner config,
# mapping each image name to its executable. make catalog-functions runs it;
# pvctl reads OUT/config.yaml next to itself (its --function-config).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/../../bin/catalog}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# Test packages may run this at once (fntest.EnsureCatalog): one builds.
exec 9>"$out/.build.lock"
flock 9
for dir in "$here"/*/; do
  name="$(basename "$dir")"
  module="$(sed -n 's/^require \([^ ]*\) .*/\1/p' "$dir/go.mod")"
  if [ -x "$out/$name" ] && [ "$out/$name" -nt "$dir/go.mod" ]; then continue; fi
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags '-s -w' -o "$out/$name" "$module")
  echo "built $out/$name"
done
cp "$here/config.yaml" "$out/config.yaml"
