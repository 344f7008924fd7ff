// Package e2e runs pvkit's function binaries the way users do: through the
// installed kpt (`kpt fn eval --exec`, `kpt fn render --allow-exec`) on copies
// of the example packages. Each case's resulting package and kpt's own output
// (timings and the work directory normalised) are compared with the checked-in
// expectations under testdata/<case>/; successful cases run their last
// command again, which must change nothing; failing cases must leave the
// package byte-for-byte as it was.
//
// The binaries are built once per test run into a temporary bin/ (static, as
// `make build` builds them). Without kpt on PATH the tests are skipped with a
// visible message. PVKIT_UPDATE_GOLDEN=1 rewrites the expectations.
package e2e
