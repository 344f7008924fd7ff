package pvsexpand

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// FuzzPVSExpand: any world file and any PackageVariantSet (CEL included),
// through the binary's code path. Seeds: the golden cases (the string bomb,
// the pathological comprehension, names that would be paths).
func FuzzPVSExpand(f *testing.F) {
	fntest.FuzzFunction(f, "pvs-expand", Process,
		[2]string{"apiVersion: config.porch.kpt.dev/v1alpha1\nkind: Repository\nmetadata:\n  name: r\n  namespace: ns\n---\napiVersion: porch.kpt.dev/v1alpha1\nkind: PackageRevision\nmetadata:\n  name: up\n  namespace: ns\nspec:\n  repository: up\n  packageName: p\n  revision: 1\n  lifecycle: Published\n",
			"apiVersion: config.porch.kpt.dev/v1alpha2\nkind: PackageVariantSet\nmetadata: {name: s, namespace: ns}\nspec:\n  upstream: {repo: up, package: p}\n  targets:\n  - repositorySelector: {}\n    template:\n      labelExprs:\n      - {key: k, valueExpr: \"repository.name.replace('r', 'rr')\"}\n"})
}
