package bench

import (
	"fmt"
	"strings"
)

// FanoutName names the pvs-expand benchmark input: a set at the bound of
// children one set may have (pvsexpand.DefaultMaxChildren, 5,000; the
// function and the controller refuse more unless an operator raises it).
const FanoutName = "5000targets-5exprs"

// FanoutRaisedName names the same set over twice as many targets, which
// only a raised bound (--max-children-per-set) lets through.
const FanoutRaisedName = "10000targets-5exprs-raised"

// FanoutSet is a PackageVariantSet whose repository selector picks every
// production Repository, with a template using five Expr fields.
const FanoutSet = `apiVersion: config.porch.kpt.dev/v1alpha2
kind: PackageVariantSet
metadata:
  name: app
  namespace: fleet
spec:
  upstream:
    repo: blueprints
    package: app
    revision: 3
  targets:
  - repositorySelector:
      matchLabels:
        env: prod
    template:
      downstream:
        packageExpr: "packageDefault + '-' + repository.labels.region"
      labelExprs:
      - key: region
        valueExpr: repository.labels.region
      annotationExprs:
      - key: zone
        valueExpr: "repository.labels.zone + '/' + target.name"
      packageContext:
        dataExprs:
        - key: tier
          valueExpr: repository.labels.tier
      injectors:
      - nameExpr: "repository.labels.region + '-endpoints'"
`

// FanoutRepository is the YAML of the i-th production Repository.
func FanoutRepository(i int) string {
	return fmt.Sprintf(`apiVersion: config.porch.kpt.dev/v1alpha1
kind: Repository
metadata:
  name: cluster-%05d
  namespace: fleet
  labels:
    env: prod
    region: r%02d
    tier: t%d
    zone: z%d
spec:
  type: git
  git:
    repo: https://example.com/cluster-%05d.git
`, i, i%20, i%3, i%7, i)
}

// FanoutUpstream is the upstream revision.
const FanoutUpstream = `apiVersion: porch.kpt.dev/v1alpha1
kind: PackageRevision
metadata:
  name: blueprints.app.v3
  namespace: fleet
spec:
  repository: blueprints
  packageName: app
  workspaceName: v3
  revision: 3
  lifecycle: Published
`

// FanoutResourceList is the function input: n Repositories, the upstream
// revision, and the set as functionConfig.
func FanoutResourceList(n int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	write := func(path, text string) {
		item(&b, path, 0, strings.Replace(text, "metadata:\n", "metadata:\n  annotations:\n%s\n", 1))
	}
	write("upstream.yaml", FanoutUpstream)
	for i := 0; i < n; i++ {
		write(fmt.Sprintf("repositories/cluster-%05d.yaml", i), FanoutRepository(i))
	}
	b.WriteString("functionConfig:\n")
	b.WriteString(indent(FanoutSet, "  "))
	return []byte(b.String())
}
