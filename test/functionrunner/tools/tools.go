//go:build tools

// Package tools pins Porch v1.5.3's function runner, which the function-runner
// test builds and runs. It is a module of its own so that the product's
// go.mod does not carry the server's dependencies.
package tools

import _ "github.com/nephio-project/porch/func/server"
