#!/usr/bin/env bash
# make demo: run pvkit's functions on the example package and show what each
# one changed. Works on a copy; the repository is never modified.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
build_pid=""
trap '[ -n "$build_pid" ] && kill "$build_pid" 2>/dev/null; rm -rf "$work"' EXIT
# A newcomer's first minutes (issue 62 #9): the four functions build first
# (about half a minute on a cold Go cache) and their part of the demo runs
# while pvctl, its catalog and Kubernetes' client libraries build in the
# background (about two minutes more, cold); pvctl's part waits for them.
echo "== building the four functions; pvctl and the catalog build in the background meanwhile"
echo "   (a cold Go cache compiles Kubernetes' client libraries: about two minutes; then seconds)"
hack/build.sh functions
hack/build.sh > "$work.build.log" 2>&1 &
build_pid=$!
cp -r examples "$work/examples"
ln -s "$PWD/bin" "$work/bin"

if command -v kpt >/dev/null 2>&1; then
  eval_fn() { (cd "$work" && kpt fn eval --exec "bin/$1" --fn-config "$2" examples/app); }
  echo "== using kpt $(kpt version 2>/dev/null | head -1)"
else
  go build -o "$work/fnrun" ./internal/cmd/fnrun
  eval_fn() { (cd "$work" && ./fnrun --exec "bin/$1" --fn-config "$2" examples/app); }
  echo "== kpt is not installed: feeding the binaries a ResourceList directly"
  echo "   (internal/cmd/fnrun does what kpt fn eval --exec does)"
fi

# step TITLE FUNCTION CONFIG: run one function and show the diff it made.
step() {
  echo
  echo "== $1"
  rm -rf "$work/before" && cp -r "$work/examples/app" "$work/before"
  eval_fn "$2" "$3"
  (cd "$work" && diff -ru before examples/app | sed "s/^/   /") || true
}

step "1. package-context with the PackageVariant examples/app-prod.yaml" package-context examples/app-prod.yaml
step "2. pipeline-prepend with the same PackageVariant" pipeline-prepend examples/app-prod.yaml
step "3. config-inject with examples/app-prod-injection.yaml (the variant's injectors and the cluster's objects)" \
  config-inject examples/app-prod-injection.yaml

echo
echo "== 4. all three again: a second run changes nothing"
rm -rf "$work/before" && cp -r "$work/examples/app" "$work/before"
for f in "package-context examples/app-prod.yaml" "pipeline-prepend examples/app-prod.yaml" "config-inject examples/app-prod-injection.yaml"; do
  eval_fn $f >/dev/null 2>&1
done
if diff -r "$work/before" "$work/examples/app" >/dev/null; then echo "   unchanged"; else echo "   CHANGED (a bug)"; exit 1; fi

echo
echo "== 5. pvs-expand: examples/fleet-set.yaml fans blueprints/app out over examples/fleet"
rm -rf "$work/before" && cp -r "$work/examples/fleet" "$work/before"
if command -v kpt >/dev/null 2>&1; then
  (cd "$work" && kpt fn eval --exec bin/pvs-expand --fn-config examples/fleet-set.yaml examples/fleet)
else
  (cd "$work" && ./fnrun --exec bin/pvs-expand --fn-config examples/fleet-set.yaml examples/fleet)
fi
(cd "$work" && diff -ruN before examples/fleet | sed "s/^/   /") || true

if command -v kpt >/dev/null 2>&1; then
  echo
  echo "== 6. kpt fn render: examples/render/app runs the three functions in its own Kptfile pipeline"
  rm -rf "$work/before" && cp -r "$work/examples/render/app" "$work/before"
  (cd "$work" && kpt fn render examples/render/app --allow-exec)
  (cd "$work" && diff -ru before examples/render/app | sed "s/^/   /") || true
fi

echo
echo "== waiting for pvctl's build (started in the background)"
if ! wait "$build_pid"; then
  build_pid=""
  cat "$work.build.log"
  echo "pvctl's build failed (above)"
  exit 1
fi
build_pid=""
sed 's/^/   /' "$work.build.log"
rm -f "$work.build.log"

# 7. The orchestrator, on a laptop: pvctl run reconciles PackageVariants and
# PackageVariantSets with the controllers' own code against local bare git
# repositories laid out as Porch lays them out.
repos="$work/repositories"
# (stderr too: warnings; off a terminal a run prints each change once, on stdout)
pvctl() { echo "   \$ pvctl $*"; "$PWD/bin/pvctl" "$@" --repos "$repos" 2>&1 | grep -v '^pvctl: ' | sed "s/^/   /"; return "${PIPESTATUS[0]}"; }
echo
echo "== 7. pvctl plan, then run: the fleet of examples/local on local git repositories (no cluster)"
pvctl publish --repo blueprints --package app examples/app
echo "   (plan: what run would do, with each package's diff; nothing is written, exit 3 = something would change)"
pvctl plan -f examples/local | sed -n '1,13p' || true
echo "   \$ pvctl plan -f examples/local --diff    (one file of it: the staging copy's package context)"
"$PWD/bin/pvctl" plan -f examples/local --diff --repos "$repos" 2>/dev/null | sed -n '/^+++ b\/core-euwest1.app.packagevariant-1\/package-context.yaml/,+11p' | sed "s/^/   /" || true
pvctl run -f examples/local
echo
echo "== 8. pvctl get: the drafts, owned by their variants, locked to blueprints app/v1"
pvctl get
echo
echo "== 9. the same run again writes nothing"
pvctl run -f examples/local | sed -n '1,2p'
echo
echo "== 10. approve one draft, publish blueprint v2, run: the published variant is upgraded in a new draft, the unapproved drafts in place"
pvctl approve edge-useast1.app.packagevariant-1
mkdir -p "$work/app-v2" && cp -r examples/app/. "$work/app-v2/"
sed -i 's/nginx:1.27/nginx:1.28/' "$work/app-v2/deployment.yaml"
pvctl publish --repo blueprints --package app "$work/app-v2"
pvctl run -f examples/local
echo
echo
echo "== 11. the same run again writes nothing: every draft is at v2"
pvctl run -f examples/local | sed -n '1,2p'
echo
echo "   git -C repositories/edge-useast1.git diff app/v1 drafts/app/packagevariant-2:"
git -C "$repos/edge-useast1.git" diff app/v1 drafts/app/packagevariant-2 | sed "s/^/   /"

echo
echo "== 11b. provenance: every revision pvkit wrote says where it came from (pvkit-provenance.yaml), and pvctl verify checks it"
pvctl verify | sed 's/ from upstream.*;/ ...;/'
"$PWD/bin/pvctl" verify --repos "$repos" >/dev/null || { echo "a revision pvkit wrote does not verify"; exit 1; }
echo "   pvctl verify --rebuild: each revision built again from what its record names (the upstream commit,"
echo "   the variant's spec, the injected objects) by the controller's reconcilers, and compared field by field"
pvctl verify --rebuild edge-useast1.app.packagevariant-1 | sed 's/; unsigned; /;\n      /; s/ 6 files as recorded .*;/ .../'
"$PWD/bin/pvctl" verify --rebuild --repos "$repos" >/dev/null || { echo "a revision pvkit wrote does not rebuild to itself"; exit 1; }
echo "   (a one-byte change pushed with git to edge-useast1's branch, behind Porch's and pvkit's back)"
git clone -q --branch main "$repos/edge-useast1.git" "$work/edge-useast1"
sed -i 's/replicas: 1/replicas: 2/' "$work/edge-useast1/app/deployment.yaml"
git -C "$work/edge-useast1" -c user.name=someone -c user.email=someone@example.com commit -qam "hotfix"
git -C "$work/edge-useast1" push -q origin main
if pvctl verify edge-useast1.app.main; then echo "the change was not caught"; exit 1; fi
verified=$("$PWD/bin/pvctl" verify edge-useast1.app.main --repos "$repos" 2>/dev/null || true)
grep -q 'FAIL edge-useast1.app.main: .*deployment.yaml (modified)' <<<"$verified" || { echo "pvctl verify did not name deployment.yaml"; exit 1; }
echo "   and the rebuild names the field: what the recorded inputs give, and what the branch holds"
rebuilt=$("$PWD/bin/pvctl" verify --rebuild edge-useast1.app.main --repos "$repos" 2>/dev/null || true)
grep 'deployment.yaml: Deployment/web spec.replicas: published 2, rebuilt 1$' <<<"$rebuilt" | sed 's/^ */   /' \
  || { echo "pvctl verify --rebuild did not name spec.replicas"; echo "$rebuilt"; exit 1; }

# 12. A fleet registered as Nephio registers it (examples/nephio): the
# catalog once per directory, cluster packages (a set by name from
# workspaceName: main, a variant from revision: -1) that carry their
# WorkloadCluster, their Repository and nested variants, --sync mgmt
# applying the published cluster packages so that the clusters'
# repositories, WorkloadClusters and nested variants are served in the same
# run, an addon set selecting the synced clusters, a local edit kept by an
# upgrade. Its own repositories.
repos="$work/nephio-repositories"
mgmt="$work/nephio-mgmt" && mkdir -p "$mgmt" && cp -r examples/nephio/mgmt/. "$mgmt/"
echo
echo "== 12. examples/nephio: Nephio's registration and management flow, offline"
pvctl publish --repo catalog --package infra/capi/workload-cluster examples/nephio/catalog/workload-cluster
pvctl publish --repo catalog --package infra/capi/cluster-capi-kind examples/nephio/catalog/cluster-capi-kind
pvctl publish --repo catalog --package infra/capi/kindnet --tag v1.0.0 examples/nephio/catalog/kindnet-v1.0.0
pvctl publish --repo catalog --package nephio/optional/rootsync examples/nephio/catalog/rootsync
pvctl run -f "$mgmt" --sync mgmt
echo "   edge01's own repository, registered by its cluster package in the same run: its RootSync"
echo "   (the package's nested variant, approved by policy) and its kindnet draft (the set, for a person):"
pvctl get --repo edge01
"$PWD/bin/pvctl" get --repos "$repos" --repo edge01 | grep -q 'edge01.rootsync.packagevariant-1 .*1 .*Published' \
  || { echo "edge01's RootSync was not published into edge01's repository"; exit 1; }
echo "   (edge01's kindnet: a local edit, pulled, edited and pushed back, then every draft approved)"
"$PWD/bin/pvctl" pull edge01.kindnet.packagevariant-1 "$work/kindnet" --repos "$repos" >/dev/null
echo "   edge01's kindnet DaemonSet, labelled by set-labels v0.2.0 (pvkit's build, in process):"
grep -A3 '^  labels:' "$work/kindnet/daemonset.yaml" | grep 'nephio.org/site-type: edge' | sed 's/^ */     /' \
  || { echo "set-labels did not label edge01's kindnet"; exit 1; }
echo "   edge01's CAPI cluster, annotated by the nested variant's set-annotations v0.1.4 (in process):"
"$PWD/bin/pvctl" pull mgmt.edge01-cluster.packagevariant-1 "$work/edge01-cluster" --repos "$repos" >/dev/null
grep -h 'nephio.org/cluster-name: edge01' "$work/edge01-cluster/cluster.yaml" | head -1 | sed 's/^ */     /' \
  || { echo "set-annotations did not annotate edge01's cluster"; exit 1; }
sed -i 's/memory: 50Mi/memory: 100Mi/' "$work/kindnet/daemonset.yaml"
pvctl push edge01.kindnet.packagevariant-1 "$work/kindnet"
pvctl approve $("$PWD/bin/pvctl" get --repos "$repos" | awk '$6 == "Draft" {print $1}') | sed -n '1,2p'
echo "   (the catalog publishes kindnet v1.1.0; the set moves to it)"
pvctl publish --repo catalog --package infra/capi/kindnet --tag v1.1.0 examples/nephio/catalog/kindnet-v1.1.0
sed -i 's/workspaceName: v1.0.0/workspaceName: v1.1.0/' "$mgmt/kindnet.yaml"
pvctl run -f "$mgmt" --sync mgmt | sed -n '1,4p'
echo "   git diff of edge01's upgrade: the new image, and the local edit kept"
git -C "$repos/edge01.git" diff kindnet/v1 drafts/kindnet/packagevariant-2 -- kindnet/daemonset.yaml | sed "s/^/   /"
echo "   pvctl verify: what pvkit wrote holds; what a person pushed over it does not (kindnet's local edit, before the upgrade)"
verified=$("$PWD/bin/pvctl" verify --repos "$repos" 2>/dev/null || true)
grep -v '^ok ' <<<"$verified" | sed 's/^/   /'
grep '^FAIL' <<<"$verified" | grep -qv 'FAIL edge01.kindnet.[a-z0-9-]*: .*daemonset.yaml (modified)$' && { echo "a revision pvkit wrote does not verify"; exit 1; }
grep -q '^FAIL edge01.kindnet.packagevariant-1: ' <<<"$verified" || { echo "the pushed edit of kindnet was not caught"; exit 1; }

# 12b. A group of packages (examples/groups, rule package-groups): the
# free5gc release's UPF, SMF and AMF on ten edge clusters as one unit; v2
# in waves, smf failing in the canary pauses the rollout naming it; undo
# brings the canary's three members back together. Its own repositories.
repos="$work/groups-repositories"
echo
echo "== 12b. examples/groups: a group of three packages released to ten clusters as one unit"
for m in upf smf amf; do "$PWD/bin/pvctl" publish --repos "$repos" --repo catalog --package free5gc-$m examples/groups/catalog/$m-v1 >/dev/null 2>&1; done
pvctl publish --repo blueprints --package free5gc examples/groups/group/v1
pvctl run -f examples/groups/fleet | sed -n '1,2p'
n=$("$PWD/bin/pvctl" get --repos "$repos" | awk '$1 ~ /^edge[0-9]+\.[a-z]+\.packagevariant-1$/ && / Published /' | wc -l)
echo "   $n member packages published (10 clusters x 3 members)"
echo "   (the release moves to v2: each member's new catalog revision, and the group's v2 naming them)"
for m in upf smf amf; do "$PWD/bin/pvctl" publish --repos "$repos" --repo catalog --package free5gc-$m examples/groups/catalog/$m-v2 >/dev/null 2>&1; done
pvctl publish --repo blueprints --package free5gc examples/groups/group/v2
pvctl run -f examples/groups/fleet | sed -n '1,4p' || true
echo "   (ten minutes later, past the progress deadline: pvctl run --now previews that instant)"
later=$(date -u -d '+11 minutes' +%Y-%m-%dT%H:%M:%SZ)
pvctl run -f examples/groups/fleet --now "$later" | sed -n '1,3p' || true
pvctl rollout status free5gc | sed -n '1,5p' || true
status=$("$PWD/bin/pvctl" rollout status free5gc --repos "$repos" 2>/dev/null || true)
grep -q 'member smf (free5gc-edge01-smf)' <<<"$status" && grep -q 'Paused' <<<"$status" \
  || { echo "the group's rollout did not pause naming the canary's smf"; echo "$status"; exit 1; }
pvctl rollout undo free5gc | sed -n '1,2p'
for i in 1 2 3; do "$PWD/bin/pvctl" run -f examples/groups/fleet --repos "$repos" --now "$later" >/dev/null 2>&1 || true; done
echo "   after the undo, the canary's three members, newest published:"
for m in upf smf amf; do
  newest=$("$PWD/bin/pvctl" get --repos "$repos" --repo edge01 | awk -v p="edge01.$m.packagevariant-" 'index($1, p) == 1 && / Published / {n=$1} END {print n}')
  image=$("$PWD/bin/pvctl" pull "$newest" - --repos "$repos" 2>/dev/null | grep -o 'image: [^ ]*' | head -1)
  echo "   $newest: $image"
  grep -q 'v3.3.0' <<<"$image" || { echo "the canary's $m is not back at the group's v1"; exit 1; }
done

# 13. A staged rollout (examples/rollout): ten repositories, v2 reaches the
# canary alone; its own repositories.
repos="$work/rollout-repositories"
echo
echo "== 13. examples/rollout: a staged rollout, the canary first"
pvctl publish --repo blueprints --package app examples/app
pvctl run -f examples/rollout | sed -n '1,2p'
pvctl approve $("$PWD/bin/pvctl" get --repos "$repos" | awk '$6 == "Draft" {print $1}') | sed -n '1,2p'
pvctl publish --repo blueprints --package app "$work/app-v2"
pvctl run -f examples/rollout | sed -n '1,4p'
pvctl rollout status app
status=$("$PWD/bin/pvctl" rollout status app --repos "$repos")
grep -q 'wave canary  *Open  *1/1 moved' <<<"$status" && grep -q 'wave early  *Pending  *0/3 moved' <<<"$status" \
  || { echo "the rollout did not open its canary wave alone"; exit 1; }
echo "   pvctl verify: every revision of the rollout holds its record"
"$PWD/bin/pvctl" verify --repos "$repos" | tail -1 | sed 's/^/   /'
"$PWD/bin/pvctl" verify --repos "$repos" >/dev/null || { echo "a revision of the rollout does not verify"; exit 1; }
