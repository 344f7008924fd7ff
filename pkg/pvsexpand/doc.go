// Package pvsexpand expands a PackageVariantSet into PackageVariants: the
// targets (repository lists, Repository and object selectors) times their
// package names, each rendered through the template's plain fields and CEL
// expressions. The pvs-expand function (Process) and the PackageVariantSet
// controller both call Expand and Plan.
//
// Decisions, where Porch v1.5.3 is the reference (docs/behavior.md):
//
//   - Child names are Porch's exactly (rule: porch-names): `<set>-<repo>-<package>`, and
//     past 63 characters the first 54 as they are (a trailing "-" stays), "-"
//     and 8 hex digits of the SHA-1. Only names Porch would write invalid (a
//     nested package, upper case, a cut ending in ".") are made safe and
//     hashed.
//   - A MapExpr with `key` and neither `value` nor `valueExpr` sets "" (rule: porch-texts).
//   - A target entry that cannot be computed is a Failure naming its field
//     path. The function turns every Failure into an error and writes nothing
//     (rule: function-exit); the controller writes the other children and reports the
//     failures in status, removing nothing (rule: no-removal-on-partial).
//   - Without a template, the downstream Repository is not looked up, as in
//     Porch: the child names the repository and its own controller reports a
//     missing one. With a template, a missing Repository fails the target.
//   - Children the function writes carry the set label and owner reference
//     but no finalizer: the PackageVariant controller (Porch's or pvkit's)
//     adds it, and a file applied where no controller runs must stay
//     deletable. The controller's children carry it from creation, as Porch's do.
package pvsexpand
