#!/usr/bin/env bash
# Measures each function image: its size, docker's own start-up (the image
# run on empty input, which exits at once), and `kpt fn eval` of the example
# package with --exec and with --image. Prints a Markdown table of medians of
# RUNS runs (default 5). Needs kpt, Docker and `make images`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N); echo $(((e - s) / 1000000)); }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

declare -A config=([package-context]=examples/app-prod.yaml [pipeline-prepend]=examples/app-prod.yaml
  [config-inject]=examples/app-prod-injection.yaml [pvs-expand]=examples/fleet-set.yaml)
declare -A pkg=([package-context]=app [pipeline-prepend]=app [config-inject]=app [pvs-expand]=fleet)

echo "| function | image size | docker start-up | kpt fn eval --exec | kpt fn eval --image | image - (exec + start-up) |"
echo "|---|---:|---:|---:|---:|---:|"
for fn in package-context pipeline-prepend config-inject pvs-expand; do
  size=$(docker image inspect -f '{{.Size}}' "pvkit/$fn:dev")
  run() { rm -rf "$work/p" && cp -r "examples/${pkg[$fn]}" "$work/p" && kpt fn eval "$@" --fn-config "${config[$fn]}" "$work/p"; }
  docker_ms=$(for _ in $(seq "$runs"); do ms docker run --rm -i pvkit/$fn:dev </dev/null; done | median)
  exec_ms=$(for _ in $(seq "$runs"); do ms run --exec "bin/$fn"; done | median)
  image_ms=$(for _ in $(seq "$runs"); do ms run --image "pvkit/$fn:dev" --image-pull-policy never; done | median)
  printf "| %s | %.1f MB | %d ms | %d ms | %d ms | %+d ms |\n" "$fn" "$(echo "$size / 1000000" | bc -l)" \
    "$docker_ms" "$exec_ms" "$image_ms" "$((image_ms - exec_ms - docker_ms))"
done
