#!/usr/bin/env bash
# Builds the kpt catalog functions into OUT (default bin/catalog), with
# config.yaml: Porch's function runner config, mapping each image name to
# its executable (pvctl reads OUT/config.yaml next to itself, its
# --function-config):
#
#   - pvkit's own (internal/catalog): one executable, pvkit-catalog, and a
#     relative symbolic link to it per behaviour (set-labels-v0.2 ->
#     pvkit-catalog), which it learns from the name it is run by (kpt's
#     --exec path, the function runner's executable) or from
#     $PVKIT_CATALOG_FUNCTION (pvctl's sandbox, which runs it through a
#     descriptor);
#   - the ones the Go module proxy serves, one module per function and
#     version (hack/catalog/<function>-<version>): by default only those
#     the examples name (REQUIRED), with `all` every one (tests, the
#     function runner, make catalog-functions); a third argument `modules`
#     builds those alone (make test, beside the lint).
#
# Nothing is rebuilt or rewritten that did not change: a module is built
# when its go.mod is newer than its executable, pvkit-catalog is replaced
# only when its content changed ($PVKIT_CATALOG_EXE: one already built),
# links and config.yaml only when they differ.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/bin/catalog}"
which="${2:-required}"
REQUIRED="set-namespace-v0.4.1"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
# Test packages may run this at once (fntest.EnsureCatalog): one builds.
exec 9>>"$out/.build.lock"
flock 9
for dir in "$here"/*/; do
  name="$(basename "$dir")"
  if [ "$which" != all ] && ! grep -qx "$name" <<<"${REQUIRED// /$'\n'}"; then continue; fi
  module="$(sed -n 's/^require \([^ ]*\) .*/\1/p' "$dir/go.mod")"
  if [ -x "$out/$name" ] && [ ! -L "$out/$name" ] && [ "$out/$name" -nt "$dir/go.mod" ]; then continue; fi
  (cd "$dir" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags '-s -w' -o "$out/$name.new" "$module")
  mv -f "$out/$name.new" "$out/$name"
  echo "built $out/$name"
done
# modules: only the proxy's modules (make test builds them while it lints).
if [ "${3:-}" = modules ]; then exit 0; fi
exe="${PVKIT_CATALOG_EXE:-}"
if [ -z "$exe" ]; then
  mkdir -p "$root/.cache/gobuild"
  exe="$root/.cache/gobuild/pvkit-catalog"
  (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/pvkit/pvkit.release=$(cat VERSION)" -o "$exe" ./orchestrator/cmd/pvkit-catalog)
fi
if ! cmp -s "$exe" "$out/pvkit-catalog"; then
  cp "$exe" "$out/pvkit-catalog.new" && mv -f "$out/pvkit-catalog.new" "$out/pvkit-catalog"
  echo "built $out/pvkit-catalog"
fi
for name in $("$out/pvkit-catalog" --list); do
  if [ "$(readlink "$out/$name" 2>/dev/null)" != pvkit-catalog ]; then
    rm -f "$out/$name" && ln -s pvkit-catalog "$out/$name"
  fi
done
config="$(mktemp)"
trap 'rm -f "$config"' EXIT
{ cat "$here/config.yaml"; "$out/pvkit-catalog" --config | sed '/^functions:$/d'; } > "$config"
if ! cmp -s "$config" "$out/config.yaml"; then
  cp "$config" "$out/config.yaml.new" && mv -f "$out/config.yaml.new" "$out/config.yaml"
fi
