// Package fntest is the golden-test harness every pvkit function uses.
//
// A case is a directory under the function's testdata/:
//
//	fnconfig.yaml        the functionConfig (optional)
//	input/               the package the function runs on (files as on disk), or
//	resourcelist.yaml    a raw ResourceList, for input-format error cases
//	expected/            the package after a successful run
//	expected-run.yaml    exit code, stderr and results of the run
//
// Each case runs in-process through the same glue as the binary
// (internal/fnmain), with a fresh processor call per run. The
// harness checks the output package, the results, stderr and the exit code;
// when the run fails it checks that no item changed; and it runs every case
// a second time on its own output, which must change nothing.
//
// PVKIT_UPDATE_GOLDEN=1 rewrites expected/ and expected-run.yaml (make golden).
package fntest
