package local

import (
	"fmt"
	"sort"
	"strings"

	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/krm"
)

// CloneNeeds says what a clone of a package will need before it renders,
// as far as the package says it itself: each required injection point (a
// PackageVariant's injectors fill it; Nephio's blueprints hold a
// WorkloadCluster one), in file order, and the package context keys only a
// variant sets (those of its own package-context.yaml beyond name and
// package-path). pvctl publish prints them beside a
// clone that does not render; a package that does not parse needs nothing
// said here (the render already named the file).
func CloneNeeds(files map[string]string) []string {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return nil
	}
	points, _ := configinject.FindPoints(items)
	var needs []string
	// The package context Porch generates for a clone holds name and
	// package-path only: every other key of the package's own is one only a
	// variant sets (packageContext.data).
	for _, it := range items {
		if krm.Path(it) != "package-context.yaml" || krm.Name(it.YNode()) != "kptfile.kpt.dev" {
			continue
		}
		var keys []string
		if data := krm.Lookup(it.YNode(), "data"); data != nil {
			for i := 0; i+1 < len(data.Content); i += 2 {
				if k := data.Content[i].Value; k != "name" && k != "package-path" {
					keys = append(keys, k)
				}
			}
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			needs = append(needs, fmt.Sprintf("the package context key(s) %s set (package-context.yaml has them; the context Porch generates for a clone holds name and package-path only; a PackageVariant's packageContext.data sets them)",
				strings.Join(keys, ", ")))
		}
	}
	for _, p := range points {
		if !p.Required {
			continue
		}
		needs = append(needs, fmt.Sprintf("%s %q injected (%s: a required injection point, condition %s; a PackageVariant's injectors fill it)",
			p.Kind, p.Name, krm.Path(p.Item), p.ConditionType()))
	}
	return needs
}
