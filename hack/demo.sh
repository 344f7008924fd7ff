#!/usr/bin/env bash
# make demo: run pvkit's functions on the example package and show what they
# changed. Works on a copy; the repository is never modified.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples "$work/examples"
ln -s "$PWD/bin" "$work/bin"

if command -v kpt >/dev/null 2>&1; then
  eval_fn() { (cd "$work" && kpt fn eval --exec "bin/$1" --fn-config "$2" examples/app); }
  echo "== using $(kpt version 2>/dev/null | head -1 | sed 's/^/kpt /')"
else
  go build -o "$work/fnrun" ./internal/cmd/fnrun
  eval_fn() { (cd "$work" && ./fnrun --exec "bin/$1" --fn-config "$2" examples/app); }
  echo "== kpt is not installed: feeding the binaries a ResourceList directly (internal/cmd/fnrun does what kpt fn eval --exec does)"
fi

show() { diff -ru --label "before/$2" --label "after/$2" "$1" "$work/examples/$2" || true; }

cp -r examples/app "$work/before"
echo
echo "== 1. package-context with the PackageVariant examples/app-prod.yaml"
eval_fn package-context examples/app-prod.yaml
show examples/app/package-context.yaml app/package-context.yaml

echo
echo "== 2. pipeline-prepend with the same PackageVariant"
eval_fn pipeline-prepend examples/app-prod.yaml
show examples/app/Kptfile app/Kptfile

echo
echo "== 3. both again: a second run changes nothing"
cp -r "$work/examples/app" "$work/once"
eval_fn package-context examples/app-prod.yaml >/dev/null
eval_fn pipeline-prepend examples/app-prod.yaml >/dev/null
if diff -r "$work/once" "$work/examples/app" >/dev/null; then echo "unchanged"; else echo "CHANGED (a bug)"; exit 1; fi

if command -v kpt >/dev/null 2>&1; then
  echo
  echo "== 4. kpt fn render: examples/render/app runs both functions in its own pipeline"
  (cd "$work" && kpt fn render examples/render/app --allow-exec)
  show examples/render/app/Kptfile render/app/Kptfile
  show examples/render/app/package-context.yaml render/app/package-context.yaml
fi
