// Package functionrunner runs pvkit's functions the way Porch does: Porch
// v1.5.3's own function runner (func/server, built from the tools module
// beside this package) is started on loopback with the exec runtime only,
// deploy/function-runner/config.yaml mapping each image name to its binary,
// and every golden case of every function is sent through its gRPC
// EvaluateFunction by image name.
//
// The runner build takes about a minute and is done once per test run. When
// it cannot be built, the test fails unless PVKIT_SKIP_FUNCTION_RUNNER=1 is
// set (then it skips, saying why): CI must run it.
package functionrunner
