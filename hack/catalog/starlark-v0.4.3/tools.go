//go:build tools

// Package tools pins the function's module; make catalog-functions builds
// its main package.
package tools

import _ "github.com/GoogleContainerTools/kpt-functions-catalog/functions/go/starlark"
