// Package configinject is the config-inject mutation: it copies in-cluster
// objects into the package's injection points and records the outcome in the
// Kptfile, as Porch's PackageVariant does (Porch v1.5.3's config injection).
//
// Injection points are the package's objects annotated
// `kpt.dev/config-injection: required|optional`, in any file. Each point's
// condition type is `config.injection.<Kind>.<metadata.name>`. Any other
// annotation value, or two points with the same condition type, fail the run
// with every problem listed.
//
// For each point the injectors are tried in order. An injector applies when
// every group, version and kind it gives equals the point's; its candidate is
// the object of the point's exact apiVersion and kind with the injector's
// name, taken from the config's `spec.resources` in the config's namespace
// (objects in any other namespace are never used). The first applying
// injector with a candidate wins. A ConfigMap (core group) gets the
// candidate's `data`; any other kind gets its `spec`; the point is annotated
// `kpt.dev/injected-resource: <candidate name>`. A candidate without that
// field is a failure of the point, not an injection.
//
// The Kptfile gets a readiness gate for each required point (existing gates
// are kept; pvkit never removes one) and one condition per point:
// True/ConfigInjected `injected resource "<name>" from cluster`, or
// False/NoResourceSelected with the reason. Conditions are merged with the
// existing ones and sorted by type.
//
// Decisions where the reference is silent:
//   - which object a point receives depends only on its apiVersion and kind,
//     so the choice is computed once per distinct type over an index of the
//     candidates: a run costs O(points + candidates + types x injectors);
//   - a point whose field already equals the candidate's is not touched, so
//     its formatting survives and a second run changes nothing;
//   - a point that is not injected keeps whatever it held, including an
//     earlier `kpt.dev/injected-resource` annotation (as in the reference);
//   - duplicate candidates (same apiVersion, kind, namespace and name) are a
//     config error; candidates in other namespaces are counted in the summary;
//   - a package without injection points needs no Kptfile and is left as is.
package configinject
