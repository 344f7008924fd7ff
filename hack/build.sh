#!/usr/bin/env bash
# make build: the four functions, pvctl and pvkit's catalog executable into
# bin/, and the catalog functions `make demo` needs into bin/catalog. One go
# build of every binary into .cache/gobuild; a binary in bin/ is replaced
# only when its content changed, so a build with nothing to do touches
# nothing (go build touches its -o target even when it is up to date).
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(cat VERSION)"
commit="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" # pvctl version prints it
ldflags="-s -w -X github.com/pvkit/pvkit.release=$version -X github.com/pvkit/pvkit.commit=$commit"
functions="./functions/package-context ./functions/pipeline-prepend ./functions/config-inject ./functions/pvs-expand"
# install SRC DST: DST becomes SRC's content when it differs (a new file,
# renamed over it), else it is left alone.
install() {
  if ! cmp -s "$1" "$2"; then
    cp "$1" "$2.new" && mv -f "$2.new" "$2"
    echo "built $2"
  fi
}
# hack/build.sh functions: the four functions alone (make demo runs their
# part while the rest builds: they need neither Kubernetes' client
# libraries nor controller-runtime, half a minute on a cold Go cache).
if [ "${1:-}" = functions ]; then
  stage=.cache/gobuild-functions
  mkdir -p "$stage" bin
  # shellcheck disable=SC2086 # the package list splits on purpose
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$stage/" $functions
  for f in package-context pipeline-prepend config-inject pvs-expand; do
    install "$stage/$f" "bin/$f"
  done
  exit 0
fi
stage=.cache/gobuild
mkdir -p "$stage" bin
# shellcheck disable=SC2086
CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$stage/" $functions \
  ./orchestrator/cmd/pvctl ./orchestrator/cmd/pvkit-catalog
for f in package-context pipeline-prepend config-inject pvs-expand pvctl; do
  install "$stage/$f" "bin/$f"
done
PVKIT_CATALOG_EXE="$stage/pvkit-catalog" hack/catalog/build.sh bin/catalog
