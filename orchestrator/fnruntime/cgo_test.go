//go:build cgo

package fnruntime

// cgoBuild: the test binary was built with cgo. Its threads then start
// with pthread_create, whose stacks (8 MiB each) RLIMIT_DATA counts: under
// the tests' small bound (96 MiB) a fresh worker on a loaded machine could
// not start its threads and died before its first call (22 of 60 runs,
// four at a time; none of 60 built without cgo, as make builds). Under the
// default bound, 2 GiB, the stacks are a small part of it.
const cgoBuild = true
