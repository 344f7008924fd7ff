// Package render (rule: render-like-porch) renders a kpt package the way
// `kpt fn render` (v1.0.0-beta.56) and Porch v1.5.3, which carries kpt's
// renderer, render it: subpackages first, depth first, each package's
// Kptfile pipeline run on its own
// resources and its subpackages' rendered ones; mutators in order, each on
// the resources its selectors pick (the rest passed through), its
// functionConfig from `configPath` (the config as the pipeline has left it
// so far) or `configMap` (a ConfigMap `function-input`); validators on a
// copy; then every resource written back to its file, files left without
// resources removed, every other file untouched.
//
// It is pure: the package lives in an in-memory file system and the
// functions run through a Runtime the caller gives (pvkit's functions
// in-process, executables, containers, Porch's function runner). Reading
// and writing go through kyaml, the library kpt uses, so the rendered bytes
// are kpt's (test/e2e compares them with `kpt fn render`).
//
// Decisions:
//   - A function that names an image without a registry path (`set-labels:v0.1`)
//     is `gcr.io/kpt-fn/set-labels:v0.1`, as kpt resolves it.
//   - `exec` functions run only when the caller allows them (kpt:
//     --allow-exec); a render that is not allowed, or whose image no runtime
//     can run, fails naming the function and what would run it.
//   - The render status is Porch's shape: each function run's image or exec
//     path, exit code, stderr and results, and the error of a failed render.
package render
