#!/usr/bin/env bash
# test/node/probe.sh STACK_DIR WORK_DIR: issue 44 #1's first measured step,
# not part of make test yet. It adds a real node to a running e2e-porch
# stack (test/porch/stack.sh up STACK_DIR): containerd 1.6 (Debian) with its
# CRI plugin and the bridge CNI plugins, kubelet v1.34.1 built from the Go
# module proxy (the stack's apiserver module), a pause image and pvkit's
# controller image built FROM scratch and imported with ctr, nothing pulled.
# Then it runs the controller as a pod (hostNetwork, the stack's kubeconfig
# mounted: pods cannot reach the apiserver on 127.0.0.1 otherwise, and the
# stack has no scheduler, kube-proxy or controller-manager yet, so
# spec.nodeName is set), waits for Ready, starts a second replica, deletes
# the leader and times the Lease's handover.
#
# Measured here (2026-11-27, sixth session, fresh stack): node Ready in 1 s; the
# controller pods Ready 2 s after they were created (non-root 65534, read-only
# root, capabilities dropped, RuntimeDefault seccomp, probes over HTTP);
# the Lease handed over 1.8 s and 3.1 s after the leader pod was deleted
# (two runs; the leader releases it on SIGTERM). What it
# took: containerd's CRI needs restrict_oom_score_adj = true here (else runc
# fails "can't get final child's PID from pipe" on the sandbox), and the
# kubeconfig given to the pod must be flattened (the stack's names its
# certificates by path).
#
# Needs root, docker (to build the images), apt-get (containerd,
# containernetworking-plugins). Leaves containerd and kubelet running;
# WORK_DIR/stop.sh stops them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
STACK=${1:?usage: probe.sh STACK_DIR WORK_DIR}
W=${2:?usage: probe.sh STACK_DIR WORK_DIR}
mkdir -p "$W"/{cni,manifests,kc,img}
export KUBECONFIG=$STACK/admin.kubeconfig
log() { echo "node-probe: $*"; }

command -v containerd >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd containernetworking-plugins >/dev/null
if [[ ! -x $W/kubelet ]]; then
	log "building kubelet v1.34.1 (about 2 minutes after the stack's apiserver build)"
	mkdir -p "$W/kubelet-mod"
	cp "$ROOT/test/porch/tools/apiserver/go.mod" "$ROOT/test/porch/tools/apiserver/go.sum" "$W/kubelet-mod/"
	sed -i 's#^module .*#module probe/kubelet#' "$W/kubelet-mod/go.mod"
	printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kubelet"\n' >"$W/kubelet-mod/tools.go"
	v=k8s.io/component-base/version
	(cd "$W/kubelet-mod" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
		-ldflags "-s -w -X $v.gitVersion=v1.34.1 -X $v.gitMajor=1 -X $v.gitMinor=34" -o "$W/kubelet" k8s.io/kubernetes/cmd/kubelet)
fi

cat >"$W/containerd.toml" <<TOML
version = 2
root = "$W/containerd-root"
state = "$W/containerd-state"
[grpc]
  address = "$W/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "pvkit.local/pause:1"
  restrict_oom_score_adj = true
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$W/cni"
TOML
cat >"$W/cni/10-bridge.conflist" <<'JSON'
{"cniVersion": "0.4.0", "name": "pvkit-node", "plugins": [
  {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.88.0.0/16"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
JSON
setsid containerd --config "$W/containerd.toml" >"$W/containerd.log" 2>&1 &
echo $! >"$W/containerd.pid"
for _ in $(seq 1 30); do [[ -S $W/containerd.sock ]] && break; sleep 0.5; done
ctr_() { ctr --address "$W/containerd.sock" -n k8s.io "$@"; }

log "images: pause and pvkit's controller, FROM scratch, imported"
cat >"$W/img/main.go" <<'GO'
package main

import "time"

// The sandbox's process: it holds the pod's namespaces and sleeps (Go's
// runtime ends it on SIGTERM, even as PID 1).
func main() {
	for {
		time.Sleep(time.Hour)
	}
}
GO
printf 'module pause\ngo 1.26\n' >"$W/img/go.mod"
(cd "$W/img" && CGO_ENABLED=0 GOFLAGS= go build -o pause . && printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' >Dockerfile &&
	docker build -q -t pvkit.local/pause:1 . >/dev/null && docker save pvkit.local/pause:1 -o pause.tar)
(cd "$ROOT" && make -s build bin/pvkit-controller >/dev/null && docker build -q -f Dockerfile.controller -t pvkit/controller:dev . >/dev/null &&
	docker save pvkit/controller:dev -o "$W/img/controller.tar")
ctr_ images import "$W/img/pause.tar" >/dev/null
ctr_ images import "$W/img/controller.tar" >/dev/null

cat >"$W/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failSwapOn: false
cgroupsPerQOS: false
enforceNodeAllocatable: []
readOnlyPort: 0
address: 127.0.0.1
healthzBindAddress: 127.0.0.1
containerRuntimeEndpoint: unix://$W/containerd.sock
staticPodPath: $W/manifests
resolvConf: ""
evictionHard: {}
localStorageCapacityIsolation: false
YAML
kubectl delete node node-1 --ignore-not-found >/dev/null # a stale one reads Ready
setsid "$W/kubelet" --config="$W/kubelet.yaml" --kubeconfig="$KUBECONFIG" --hostname-override=node-1 --root-dir="$W/kubelet-root" >"$W/kubelet.log" 2>&1 &
echo $! >"$W/kubelet.pid"
cat >"$W/stop.sh" <<STOP
#!/usr/bin/env bash
kill \$(cat "$W/kubelet.pid") 2>/dev/null; sleep 1
# The containers' processes outlive their shims: kill them first.
for t in \$(ctr --address "$W/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
	ctr --address "$W/containerd.sock" -n k8s.io tasks kill -a -s SIGKILL "\$t" 2>/dev/null
done
sleep 1
pkill -f "containerd-shim-runc-v2.*$W" 2>/dev/null
kill \$(cat "$W/containerd.pid") 2>/dev/null; sleep 1
mount | awk '\$3 ~ "^$W" {print \$3}' | sort -r | xargs -r umount -l
STOP
chmod +x "$W/stop.sh"
s=$(date +%s)
until [[ $(kubectl get node node-1 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]; do
	(( $(date +%s) - s < 60 )) || { log "node-1 not Ready in 60 s"; tail -20 "$W/kubelet.log"; exit 1; }
	sleep 1
done
log "node-1 Ready after $(( $(date +%s) - s )) s"

kubectl apply --server-side -k "$ROOT/config/crd" >/dev/null
kubectl get sa default >/dev/null 2>&1 || kubectl create sa default >/dev/null
kubectl config view --flatten --minify >"$W/kc/kubeconfig" && chmod 755 "$W/kc" && chmod 644 "$W/kc/kubeconfig"
pod() { # NAME PROBE_PORT
	cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  nodeName: node-1
  hostNetwork: true
  automountServiceAccountToken: false
  securityContext: {runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: {type: RuntimeDefault}}
  containers:
  - name: manager
    image: docker.io/pvkit/controller:dev
    imagePullPolicy: Never
    args: [--kubeconfig=/kc/kubeconfig, --leader-elect, --leader-election-namespace=default, --metrics-bind-address=0,
      --health-probe-bind-address=127.0.0.1:$2, --readable-kinds=ConfigMap]
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: {drop: [ALL]}}
    readinessProbe: {httpGet: {path: /readyz, port: $2, host: 127.0.0.1}, periodSeconds: 2}
    livenessProbe: {httpGet: {path: /healthz, port: $2, host: 127.0.0.1}, periodSeconds: 5}
    volumeMounts: [{name: kc, mountPath: /kc, readOnly: true}]
  volumes: [{name: kc, hostPath: {path: $W/kc, type: Directory}}]
YAML
}
ready() { # NAME
	local s=$(date +%s)
	until [[ $(kubectl get pod "$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]; do
		(( $(date +%s) - s < 90 )) || { log "pod $1 not Ready in 90 s"; kubectl get pod "$1" -o wide; tail -5 "$W/kubelet.log"; exit 1; }
		sleep 0.5
	done
	log "pod $1 Ready after $(( $(date +%s) - s )) s"
}
pod pvkit-a 18081 | kubectl apply -f - >/dev/null && ready pvkit-a
pod pvkit-b 18082 | kubectl apply -f - >/dev/null && ready pvkit-b
lease() { kubectl get lease -n default pvkit-controller.pvkit.dev -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
until [[ -n $(lease) ]]; do sleep 0.5; done
leader=$(lease)
victim=pvkit-a # Ready and leading before pvkit-b started
s=$(date +%s%N)
kubectl delete pod "$victim" --wait=false >/dev/null
while h=$(lease); [[ -z $h || $h == "$leader" ]]; do # released ("") is not taken yet
	(( ($(date +%s%N) - s) / 1000000000 < 60 )) || { log "no handover in 60 s"; exit 1; }
	sleep 0.2
done
log "deleted $victim (the leader); the Lease moved to $h after $(( ($(date +%s%N) - s) / 1000000 )) ms"
