// Package variant is what a PackageVariant does to a package, in-process
// (rule: one-mutation):
// its validation, and its mutations in the fixed order of the design
// (package-context, then pipeline-prepend, then config-inject), each
// function's own code in pkg/ called with the config its typed constructor
// builds from the typed variant (packagecontext.NewConfig,
// pipelineprepend.NewConfig, configinject.NewConfig). The binaries build
// the same configs from YAML (each ConfigFromObject is a decode and the
// same checks); a test runs the chain both ways and requires identical
// output. The spec is never encoded to YAML on the way: YAML appears only
// where it is package content (pipeline entries, injected objects).
//
// The readiness gate MutationGate, when the package has it, is set True
// once every step succeeded: the draft is finished in the same write
// (rule: finished-in-one-write).
//
// Change detection is semantic: a file whose content only moved keys or
// formatting is no change and keeps its bytes, so an unchanged variant
// never causes a write (rule: zero-write-steady-state).
package variant
