package local

import (
	"fmt"

	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/krm"
)

// CloneNeeds says what a clone of a package will need before it renders,
// as far as the package says it itself: each required injection point (a
// PackageVariant's injectors fill it; Nephio's blueprints hold a
// WorkloadCluster one), in file order. pvctl publish prints them beside a
// clone that does not render; a package that does not parse needs nothing
// said here (the render already named the file).
func CloneNeeds(files map[string]string) []string {
	items, err := krm.FilesToItems(files)
	if err != nil {
		return nil
	}
	points, _ := configinject.FindPoints(items)
	var needs []string
	for _, p := range points {
		if !p.Required {
			continue
		}
		needs = append(needs, fmt.Sprintf("%s %q injected (%s: a required injection point, condition %s; a PackageVariant's injectors fill it)",
			p.Kind, p.Name, krm.Path(p.Item), p.ConditionType()))
	}
	return needs
}
