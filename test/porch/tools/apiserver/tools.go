//go:build tools

// Package tools pins kube-apiserver for the real-Porch tests (make e2e-porch),
// out of the product's go.mod so that pvkit does not depend on k8s.io/kubernetes.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
