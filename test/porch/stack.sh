#!/usr/bin/env bash
# A real Porch v1.5.3 on 127.0.0.1, with no containers, for `make e2e-porch`
# (../shared/notes/real-porch-on-loopback.md has the measured facts).
#
#   test/porch/stack.sh build        build what is missing into .cache/porch/bin
#   test/porch/stack.sh up DIR       start etcd, kube-apiserver, the function
#                                    runner and porch-server; DIR/admin.kubeconfig
#   test/porch/stack.sh down DIR     stop exactly what `up DIR` started
#   test/porch/stack.sh kill-porch DIR | restart-porch DIR
#                                    porch-server killed (SIGKILL) / started again
#   test/porch/stack.sh edge-up DIR | edge-down DIR
#                                    a second kube-apiserver (an edge cluster's, 6444)
#
# Pieces: etcd from Debian's etcd-server; kube-apiserver v1.34.1, porch-server,
# Porch's function runner and Porch's own PackageVariant controllers (for the
# takeover test) from the Go module proxy, in the tools modules under
# test/porch/tools (outside pvkit's go.mod). Builds are cached in
# .cache/porch/bin, keyed by the tools modules' go.sum.
#
# Ports: etcd 2379/2380, kube-apiserver 6443, porch-server 9443, function
# runner 9445: `up` refuses to start when one is taken.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/.cache/porch/bin
PORCH_MOD=$(cd "$ROOT/test/porch/tools/porch" && GOFLAGS=-mod=mod go list -m -f '{{.Dir}}' github.com/nephio-project/porch)
export GOTOOLCHAIN=local GOFLAGS=-mod=mod

log() { echo "stack: $*" >&2; }
NODE_ADDRESS=${PVKIT_STACK_NODE_ADDRESS:-}

stamp() { sha256sum "$ROOT/test/porch/tools/$1/go.sum" | cut -c1-16; }

build() {
	mkdir -p "$BIN"
	# One build at a time (.ci/run starts one in the background early).
	exec 9>"$BIN/.build.lock"
	flock 9
	local s
	s=$(stamp apiserver)
	if [[ ! -x $BIN/kube-apiserver || $(cat "$BIN/kube-apiserver.stamp" 2>/dev/null) != "$s" ]]; then
		log "building kube-apiserver v1.34.1 (2-3 minutes cold)"
		local v=k8s.io/component-base/version c=k8s.io/client-go/pkg/version
		(cd "$ROOT/test/porch/tools/apiserver" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w \
			-X $v.gitVersion=v1.34.1 -X $v.gitMajor=1 -X $v.gitMinor=34 \
			-X $c.gitVersion=v1.34.1 -X $c.gitMajor=1 -X $c.gitMinor=34" \
			-o "$BIN/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
		echo "$s" >"$BIN/kube-apiserver.stamp"
	fi
	s=$(stamp porch)
	if [[ ! -x $BIN/porch-server || ! -x $BIN/function-runner || ! -x $BIN/porch-controllers ||
		$(cat "$BIN/porch.stamp" 2>/dev/null) != "$s" ]]; then
		log "building porch-server, the function runner and Porch's controllers v1.5.3 (about 2 minutes cold)"
		(cd "$ROOT/test/porch/tools/porch" &&
			CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$BIN/porch-server" github.com/nephio-project/porch/cmd/porch &&
			CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$BIN/function-runner" github.com/nephio-project/porch/func/server &&
			CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$BIN/porch-controllers" github.com/nephio-project/porch/controllers)
		echo "$s" >"$BIN/porch.stamp"
	fi
	command -v etcd >/dev/null || { log "etcd is not installed (apt-get install etcd-server)"; return 1; }
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() { # name, seconds, command...
	local name=$1 n=$2
	shift 2
	for ((i = 0; i < n * 10; i++)); do
		if "$@" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	log "$name did not come up in ${n}s; its log:"
	tail -30 "$DIR/$name.log" >&2 || true
	return 1
}

start() { # name, command...
	local name=$1
	shift
	"$@" >"$DIR/$name.log" 2>&1 &
	echo $! >"$DIR/$name.pid"
}

certs() {
	local d=$DIR/pki
	mkdir -p "$d"
	cd "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=pvkit-e2e-ca -keyout ca.key -out ca.crt 2>/dev/null
	cat >apiserver.ext <<-EOF
	subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc${NODE_ADDRESS:+,IP:$NODE_ADDRESS,IP:10.0.0.1}
	EOF
	openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver -keyout apiserver.key -out apiserver.csr 2>/dev/null
	openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile apiserver.ext -out apiserver.crt 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/O=system:masters/CN=admin" -keyout admin.key -out admin.csr 2>/dev/null
	openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out admin.crt 2>/dev/null
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=front-proxy-ca -keyout front-proxy-ca.key -out front-proxy-ca.crt 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj /CN=front-proxy-client -keyout front-proxy-client.key -out front-proxy-client.csr 2>/dev/null
	openssl x509 -req -in front-proxy-client.csr -CA front-proxy-ca.crt -CAkey front-proxy-ca.key -CAcreateserial -days 2 -out front-proxy-client.crt 2>/dev/null
	cd - >/dev/null
}

kubeconfig() { # file, user stanza lines
	cat >"$1" <<-EOF
	apiVersion: v1
	kind: Config
	clusters:
	- name: e2e
	  cluster:
	    server: https://127.0.0.1:6443
	    certificate-authority: $DIR/pki/ca.crt
	contexts:
	- name: e2e
	  context: {cluster: e2e, user: admin}
	current-context: e2e
	users:
	- name: admin
	  user:
	    client-certificate: $DIR/pki/admin.crt
	    client-key: $DIR/pki/admin.key
	EOF
}

up() {
	mkdir -p "$DIR"
	DIR=$(cd "$DIR" && pwd)
	for p in 2379 2380 6443 9443 9445; do
		port_free "$p" || { log "port $p on 127.0.0.1 is taken: is another stack up?"; return 1; }
	done
	certs
	kubeconfig "$DIR/admin.kubeconfig"
	export KUBECONFIG=$DIR/admin.kubeconfig
	start etcd etcd --data-dir "$DIR/etcd" --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster default=http://127.0.0.1:2380 --name default
	wait_for etcd 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/2379'
	cat >"$DIR/audit-policy.yaml" <<-EOF
	apiVersion: audit.k8s.io/v1
	kind: Policy
	rules:
	- level: Metadata
	EOF
	# With PVKIT_STACK_NODE_ADDRESS (test/node/node.sh: a real node's pods
	# reach the apiserver through the kubernetes Service, which kube-proxy
	# sends to this address), the apiserver listens on every interface and
	# advertises that one; otherwise on 127.0.0.1 only.
	local bind=127.0.0.1 advertise=127.0.0.1 reconciler=none
	if [[ -n $NODE_ADDRESS ]]; then bind=0.0.0.0 advertise=$NODE_ADDRESS reconciler=lease; fi
	start kube-apiserver "$BIN/kube-apiserver" --bind-address=$bind --advertise-address=$advertise --secure-port=6443 \
		--etcd-servers=http://127.0.0.1:2379 --endpoint-reconciler-type=$reconciler --service-cluster-ip-range=10.0.0.0/24 \
		--authorization-mode=RBAC --anonymous-auth=false \
		--tls-cert-file="$DIR/pki/apiserver.crt" --tls-private-key-file="$DIR/pki/apiserver.key" --client-ca-file="$DIR/pki/ca.crt" \
		--service-account-key-file="$DIR/pki/sa.pub" --service-account-signing-key-file="$DIR/pki/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc \
		--requestheader-client-ca-file="$DIR/pki/front-proxy-ca.crt" --requestheader-allowed-names=front-proxy-client \
		--requestheader-username-headers=X-Remote-User --requestheader-group-headers=X-Remote-Group \
		--requestheader-extra-headers-prefix=X-Remote-Extra- \
		--proxy-client-cert-file="$DIR/pki/front-proxy-client.crt" --proxy-client-key-file="$DIR/pki/front-proxy-client.key" \
		--enable-aggregator-routing=false --audit-policy-file="$DIR/audit-policy.yaml" --audit-log-path="$DIR/audit.log" \
		--audit-log-maxsize=1000000 # never rotated: the benchmarks count requests from an offset in it (rotated at its 100 MB default, an N=200 rollout counted a seventh of its requests)
	wait_for kube-apiserver 60 kubectl get --raw /readyz
	kubectl create namespace porch-system >/dev/null
	kubectl apply -f "$PORCH_MOD/api/porchconfig/v1alpha1/config.porch.kpt.dev_repositories.yaml" \
		-f "$PORCH_MOD/internal/api/porchinternal/v1alpha1/config.porch.kpt.dev_packagerevs.yaml" >/dev/null
	kubectl apply -f - >/dev/null <<-EOF
	apiVersion: v1
	kind: Service
	metadata: {name: api, namespace: porch-system}
	spec: {type: ExternalName, externalName: localhost}
	---
	apiVersion: apiregistration.k8s.io/v1
	kind: APIService
	metadata: {name: v1alpha1.porch.kpt.dev}
	spec:
	  group: porch.kpt.dev
	  version: v1alpha1
	  groupPriorityMinimum: 1000
	  versionPriority: 15
	  insecureSkipTLSVerify: true
	  service: {name: api, namespace: porch-system, port: 9443}
	EOF
	start function-runner "$BIN/function-runner" --port 9445 --disable-runtimes pod \
		--config "$ROOT/deploy/function-runner/config.yaml" --functions "$ROOT/bin"
	wait_for function-runner 20 bash -c 'exec 3<>/dev/tcp/127.0.0.1/9445'
	start_porch
	log "up in $DIR: KUBECONFIG=$DIR/admin.kubeconfig"
}

start_porch() {
	mkdir -p "$DIR/porch-cache" "$DIR/porch-certs"
	# Appends: a restarted server's log follows the first one's.
	env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT "$BIN/porch-server" \
		--secure-port=9443 --bind-address=127.0.0.1 --standalone-debug-mode --kubeconfig="$DIR/admin.kubeconfig" \
		--cache-directory="$DIR/porch-cache" --cert-dir="$DIR/porch-certs" --function-runner=127.0.0.1:9445 \
		--repo-sync-frequency=5s >>"$DIR/porch-server.log" 2>&1 &
	echo $! >"$DIR/porch-server.pid"
	KUBECONFIG=$DIR/admin.kubeconfig wait_for porch-server 60 kubectl get packagerevisions -A
}

# edge-up: a second kube-apiserver, an edge cluster's (issue 58), on port
# 6444, its objects in the same etcd under another prefix (/edge), the same
# CA and admin certificate; DIR/edge.kubeconfig carries its data inline, as
# Cluster API's <cluster>-kubeconfig Secrets do. edge-down stops it (its
# objects stay in etcd: edge-up again serves them).
edge_up() {
	port_free 6444 || { log "port 6444 on 127.0.0.1 is taken: is an edge API server up?"; return 1; }
	start edge-apiserver "$BIN/kube-apiserver" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6444 \
		--etcd-servers=http://127.0.0.1:2379 --etcd-prefix=/edge --endpoint-reconciler-type=none --service-cluster-ip-range=10.0.1.0/24 \
		--authorization-mode=RBAC --anonymous-auth=false \
		--tls-cert-file="$DIR/pki/apiserver.crt" --tls-private-key-file="$DIR/pki/apiserver.key" --client-ca-file="$DIR/pki/ca.crt" \
		--service-account-key-file="$DIR/pki/sa.pub" --service-account-signing-key-file="$DIR/pki/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc --enable-aggregator-routing=false
	b64() { base64 -w0 <"$1"; }
	cat >"$DIR/edge.kubeconfig" <<-EOF
	apiVersion: v1
	kind: Config
	clusters:
	- name: edge
	  cluster: {server: "https://127.0.0.1:6444", certificate-authority-data: $(b64 "$DIR/pki/ca.crt")}
	contexts:
	- name: edge
	  context: {cluster: edge, user: admin}
	current-context: edge
	users:
	- name: admin
	  user: {client-certificate-data: $(b64 "$DIR/pki/admin.crt"), client-key-data: $(b64 "$DIR/pki/admin.key")}
	EOF
	KUBECONFIG=$DIR/edge.kubeconfig wait_for edge-apiserver 60 kubectl get --raw /readyz
}

edge_down() {
	[[ -f $DIR/edge-apiserver.pid ]] || return 0
	local pid
	pid=$(cat "$DIR/edge-apiserver.pid")
	kill "$pid" 2>/dev/null || true
	for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$DIR/edge-apiserver.pid"
}

# kill-porch: porch-server killed (SIGKILL, mid-request); restart-porch: started again.
kill_porch() {
	local pid
	pid=$(cat "$DIR/porch-server.pid")
	kill -9 "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
	rm -f "$DIR/porch-server.pid"
}

down() {
	[[ -d $DIR ]] || return 0
	local name pid
	for name in porch-controllers pvkit-controller porch-server function-runner edge-apiserver kube-apiserver etcd; do
		[[ -f $DIR/$name.pid ]] || continue
		pid=$(cat "$DIR/$name.pid")
		kill "$pid" 2>/dev/null || true
		for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$pid" 2>/dev/null || true
		rm -f "$DIR/$name.pid"
	done
}

case "${1:-}" in
build) build ;;
up) DIR=${2:?usage: stack.sh up DIR} up ;;
down) DIR=${2:?usage: stack.sh down DIR} down ;;
kill-porch) DIR=${2:?usage: stack.sh kill-porch DIR} kill_porch ;;
restart-porch) DIR=${2:?usage: stack.sh restart-porch DIR} start_porch ;;
edge-up) DIR=${2:?usage: stack.sh edge-up DIR} edge_up ;;
edge-down) DIR=${2:?usage: stack.sh edge-down DIR} edge_down ;;
*)
	echo "usage: $0 build | up DIR | down DIR | kill-porch DIR | restart-porch DIR | edge-up DIR | edge-down DIR" >&2
	exit 2
	;;
esac
