#!/usr/bin/env bash
# Builds the kpt catalog functions the Go module proxy serves, one module
# per function and version (hack/catalog/<function>-<version>), and pvkit's
# own catalog functions (pvkit-catalog, pkg/catalog), into OUT
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
# pvkit's own catalog functions (pkg/catalog): pvkit-catalog, an executable
# per behaviour, and their images appended to the config.
root="$(cd "$here/../.." && pwd)"
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$out/pvkit-catalog.new" ./orchestrator/cmd/pvkit-catalog)
mv -f "$out/pvkit-catalog.new" "$out/pvkit-catalog"
# One executable per behaviour, the behaviour built in (-X main.builtin):
# pvctl runs a sandboxed executable as /proc/self/fd/3 when it is root, so
# the name it was called by cannot say which function it is.
for name in $("$out/pvkit-catalog" --list); do
  rm -f "$out/$name"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.builtin=$name" -o "$out/$name" ./orchestrator/cmd/pvkit-catalog)
done
{ cat "$here/config.yaml"; "$out/pvkit-catalog" --config | sed '/^functions:$/d'; } > "$out/config.yaml.new"
mv -f "$out/config.yaml.new" "$out/config.yaml"
