// Package bench holds pvkit's function benchmarks. Each benchmark runs a
// function exactly as the binary does (ResourceList bytes in, bytes out,
// through internal/fnmain) on a generated package of N resources, next to a
// floor: kyaml parsing and serialising the same ResourceList and doing
// nothing else. `make bench` prints them as a table with the ratio to the
// floor (internal/cmd/benchtable); results are recorded in docs/performance.md.
package bench
