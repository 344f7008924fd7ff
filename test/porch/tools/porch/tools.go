//go:build tools

// Package tools pins Porch v1.5.3's server, function runner and own
// PackageVariant controllers for the real-Porch tests (make e2e-porch), out
// of the product's go.mod.
package tools

import (
	_ "github.com/nephio-project/porch/cmd/porch"
	_ "github.com/nephio-project/porch/controllers"
	_ "github.com/nephio-project/porch/func/server"
)
