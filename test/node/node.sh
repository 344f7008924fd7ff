#!/usr/bin/env bash
# A real node and the rest of the control plane beside the e2e-porch stack
# (issue 44 #1), built and run here, nothing pulled:
#
#   test/node/node.sh build            kubelet, kube-controller-manager,
#                                      kube-scheduler and kube-proxy v1.34.1
#                                      into .cache/porch/bin/node (one build
#                                      of test/node/tools/kube, cached by its
#                                      go.sum; about 3 minutes cold)
#   test/node/node.sh up STACK WORK    on a stack brought up with
#                                      PVKIT_STACK_NODE_ADDRESS (the host's
#                                      address pods reach the apiserver at):
#                                      containerd 1.6 (Debian) with its CRI
#                                      and the bridge CNI, a pause image
#                                      FROM scratch, two kubelets (node-1,
#                                      node-2, each its own containerd), the
#                                      controller-manager, the scheduler and
#                                      kube-proxy (iptables); waits for
#                                      both nodes Ready
#   test/node/node.sh import WORK TAR  an OCI or docker archive into both
#                                      nodes' image stores (ctr import)
#   test/node/node.sh down WORK        stops exactly what up started
#   test/node/node.sh address          the host's address (the default
#                                      route's source), for
#                                      PVKIT_STACK_NODE_ADDRESS
#
# Why containerd and not cri-dockerd over the Docker engine here: Debian
# serves containerd 1.6 with its CRI plugin, kubelet talks to it directly,
# and images import from an archive (`make release` writes OCI archives);
# cri-dockerd is not packaged and would add a shim to build.
#
# What it took (measured, 2026-11-27): containerd's CRI needs
# restrict_oom_score_adj = true in this container (else runc fails "can't
# get final child's PID from pipe" on the sandbox); a container's processes
# outlive their shims, so down kills the tasks first; the apiserver must
# listen beyond 127.0.0.1 (a pod's network namespace cannot reach the
# host's loopback) and advertise an address kube-proxy can send the
# kubernetes Service to.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/.cache/porch/bin/node
export GOTOOLCHAIN=local
log() { echo "node: $*" >&2; }

build() {
	mkdir -p "$BIN"
	exec 9>"$BIN/.build.lock"
	flock 9
	_build
	# Released: the processes up starts would inherit the lock otherwise.
	exec 9>&-
}

_build() {
	local s
	s=$(sha256sum "$ROOT/test/node/tools/kube/go.sum" | cut -c1-16)
	if [[ -x $BIN/kubelet && -x $BIN/kube-proxy && -x $BIN/kube-scheduler && -x $BIN/kube-controller-manager &&
		$(cat "$BIN/stamp" 2>/dev/null) == "$s" ]]; then
		return 0
	fi
	log "building kubelet, kube-controller-manager, kube-scheduler and kube-proxy v1.34.1"
	local v=k8s.io/component-base/version c=k8s.io/client-go/pkg/version
	(cd "$ROOT/test/node/tools/kube" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w \
		-X $v.gitVersion=v1.34.1 -X $v.gitMajor=1 -X $v.gitMinor=34 \
		-X $c.gitVersion=v1.34.1 -X $c.gitMajor=1 -X $c.gitMinor=34" -o "$BIN/" \
		k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy)
	echo "$s" >"$BIN/stamp"
}

start() { # name, command...
	local name=$1
	shift
	setsid "$@" >"$W/$name.log" 2>&1 &
	echo $! >"$W/$name.pid"
}

ctr_() { # node index, args...
	local n=$1
	shift
	ctr --address "$W/node-$n/containerd.sock" -n k8s.io "$@"
}

# Two nodes (the Deployment spreads its two replicas over two hosts and
# refuses one): each its own containerd (a kubelet removes the containers
# of a runtime it does not know), bridge and subnet, kubelet and ports.
containerd_up() { # node index
	local n=$1 N=$W/node-$1
	mkdir -p "$N/cni"
	# Docker's engine may have brought containerd already; the CNI plugins
	# are another package.
	if ! command -v containerd >/dev/null || [[ ! -x /usr/lib/cni/bridge ]]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd containernetworking-plugins >/dev/null
	fi
	cat >"$N/containerd.toml" <<-TOML
	version = 2
	root = "$N/containerd-root"
	state = "$N/containerd-state"
	[grpc]
	  address = "$N/containerd.sock"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "pvkit.local/pause:1"
	  restrict_oom_score_adj = true
	  disable_apparmor = true
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "/usr/lib/cni"
	    conf_dir = "$N/cni"
	TOML
	cat >"$N/cni/10-bridge.conflist" <<-JSON
	{"cniVersion": "0.4.0", "name": "pvkit-node-$n", "plugins": [
	  {"type": "bridge", "bridge": "cni$n", "isGateway": true, "ipMasq": false,
	   "ipam": {"type": "host-local", "dataDir": "$N/ipam", "ranges": [[{"subnet": "10.88.$n.0/24"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
	  {"type": "portmap", "capabilities": {"portMappings": true}}]}
	JSON
	start "node-$n/containerd" containerd --config "$N/containerd.toml"
	for _ in $(seq 1 30); do [[ -S $N/containerd.sock ]] && break; sleep 0.5; done
	# The sandbox: a process that holds the pod's namespaces and sleeps.
	if [[ ! -f $W/pause/pause.tar ]]; then
		mkdir -p "$W/pause"
		printf 'package main\n\nimport "time"\n\nfunc main() {\n\tfor {\n\t\ttime.Sleep(time.Hour)\n\t}\n}\n' >"$W/pause/main.go"
		printf 'module pause\ngo 1.26\n' >"$W/pause/go.mod"
		(cd "$W/pause" && CGO_ENABLED=0 GOFLAGS= go build -o pause . && printf 'FROM scratch\nCOPY pause /pause\nENTRYPOINT ["/pause"]\n' >Dockerfile &&
			docker build -q -t pvkit.local/pause:1 . >/dev/null && docker save pvkit.local/pause:1 -o pause.tar)
	fi
	ctr_ "$n" images import "$W/pause/pause.tar" >/dev/null
}

control_plane_up() {
	local pki=$STACK/pki kc=$STACK/admin.kubeconfig
	# The controller-manager signs nothing here: the apiserver issues the
	# ServiceAccount tokens (TokenRequest); it runs the Deployment,
	# ReplicaSet, disruption (PDB), ServiceAccount, node lifecycle (it lifts
	# the not-ready taint a kubelet registers with), root CA (the
	# kube-root-ca.crt a token mount needs), endpoint and garbage
	# collector controllers.
	start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$kc" --authentication-kubeconfig="$kc" \
		--authorization-kubeconfig="$kc" --bind-address=127.0.0.1 --leader-elect=false \
		--service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
		--controllers='*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle-controller'
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$kc" --authentication-kubeconfig="$kc" \
		--authorization-kubeconfig="$kc" --bind-address=127.0.0.1 --leader-elect=false
	cat >"$W/kube-proxy.yaml" <<-YAML
	apiVersion: kubeproxy.config.k8s.io/v1alpha1
	kind: KubeProxyConfiguration
	mode: iptables
	clientConnection: {kubeconfig: $kc}
	hostnameOverride: node-1
	clusterCIDR: 10.88.0.0/16
	bindAddress: 127.0.0.1
	healthzBindAddress: 127.0.0.1:10256
	metricsBindAddress: 127.0.0.1:10249
	conntrack: {maxPerCore: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	YAML
	start kube-proxy "$BIN/kube-proxy" --config="$W/kube-proxy.yaml"
}

kubelet_up() { # node index
	local n=$1 N=$W/node-$1
	cat >"$N/kubelet.yaml" <<-YAML
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
	port: $((10250 + 1000 * (n - 1)))
	healthzBindAddress: 127.0.0.1
	healthzPort: $((10248 + 1000 * (n - 1)))
	containerRuntimeEndpoint: unix://$N/containerd.sock
	resolvConf: ""
	evictionHard: {}
	localStorageCapacityIsolation: false
	YAML
	kubectl delete node "node-$n" --ignore-not-found >/dev/null # a stale one reads Ready
	start "node-$n/kubelet" "$BIN/kubelet" --config="$N/kubelet.yaml" --kubeconfig="$STACK/admin.kubeconfig" \
		--hostname-override="node-$n" --node-ip="$PVKIT_STACK_NODE_ADDRESS" --root-dir="$N/kubelet-root"
}

ready() { # node index
	local s=$SECONDS
	until [[ $(kubectl get node "node-$1" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]; do
		((SECONDS - s < 60)) || { log "node-$1 not Ready in 60 s"; tail -20 "$W/node-$1/kubelet.log" >&2; return 1; }
		sleep 1
	done
	log "node-$1 Ready after $((SECONDS - s)) s"
}

up() {
	[[ -n ${PVKIT_STACK_NODE_ADDRESS:-} ]] || { log "PVKIT_STACK_NODE_ADDRESS is unset: bring the stack up with it (the host's address)"; return 1; }
	build
	mkdir -p "$W"
	W=$(cd "$W" && pwd)
	export KUBECONFIG=$STACK/admin.kubeconfig
	containerd_up 1
	containerd_up 2
	control_plane_up
	kubelet_up 1
	kubelet_up 2
	ready 1
	ready 2
	log "up in $W (node-1 and node-2, the controller-manager, the scheduler, kube-proxy); stop: $0 down $W"
}

down() {
	for p in node-1/kubelet node-2/kubelet kube-proxy kube-scheduler kube-controller-manager; do
		[[ -f $W/$p.pid ]] && kill "$(cat "$W/$p.pid")" 2>/dev/null || true
	done
	sleep 1
	# A container's processes outlive their shims: kill them first.
	for n in 1 2; do
		[[ -S $W/node-$n/containerd.sock ]] || continue
		for t in $(ctr_ "$n" tasks ls -q 2>/dev/null); do ctr_ "$n" tasks kill -a -s SIGKILL "$t" 2>/dev/null || true; done
	done
	sleep 1
	pkill -f "containerd-shim-runc-v2.*$W" 2>/dev/null || true
	for n in 1 2; do [[ -f $W/node-$n/containerd.pid ]] && kill "$(cat "$W/node-$n/containerd.pid")" 2>/dev/null || true; done
	sleep 1
	mount | awk -v w="$W" 'index($3, w) == 1 {print $3}' | sort -r | xargs -r umount -l
	# kube-proxy's rules, so that a later node starts clean.
	iptables-save 2>/dev/null | grep -q KUBE- && { iptables-save | grep -v KUBE- | iptables-restore; } 2>/dev/null || true
	rm -f "$W"/*.pid "$W"/node-*/*.pid
}

# address: the host's address on its default route, which pods reach it at.
address() { ip -4 route get 192.0.2.255 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}' | head -1; }

case ${1:-} in
build) build ;;
address) address ;;
up) STACK=${2:?usage: node.sh up STACK WORK} W=${3:?usage: node.sh up STACK WORK} up ;;
import) # into both nodes, named by tag and by digest
	W=${2:?usage: node.sh import WORK TAR}
	for n in 1 2; do
		# ctr names the image by tag only; a Pod that names it by digest
		# (make release's manifests do) is looked up by repo@digest, which
		# containerd's CRI records on a pull, not on an import.
		ctr_ "$n" images import "${3:?usage: node.sh import WORK TAR}" |
			sed -n 's/^unpacking \([^ ]*\) (\(sha256:[0-9a-f]*\)).*/\1 \2/p' |
			while read -r name digest; do ctr_ "$n" images tag --force "$name" "${name%:*}@$digest" >/dev/null; done
	done ;;
down) W=${2:?usage: node.sh down WORK} down ;;
*)
	echo "usage: $0 build | up STACK WORK | import WORK TAR | down WORK | address" >&2
	exit 2
	;;
esac
