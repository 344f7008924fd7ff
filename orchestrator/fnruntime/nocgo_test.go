//go:build !cgo

package fnruntime

// cgoBuild: the test binary was built without cgo (cgo_test.go).
const cgoBuild = false
