//go:build tools

// Package tools pins the node and the rest of the control plane for the
// real-node tests (test/node/node.sh): kubelet, kube-controller-manager,
// kube-scheduler and kube-proxy v1.34.1, out of the product's go.mod and
// beside the stack's kube-apiserver (test/porch/tools/apiserver, whose
// go.mod this one copies).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
