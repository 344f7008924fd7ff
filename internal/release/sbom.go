package release

import (
	"bytes"
	"debug/buildinfo"
	"fmt"
	"sort"

	cdx "github.com/CycloneDX/cyclonedx-go"
)

// SBOM is the CycloneDX software bill of materials of a Go binary, from
// the module graph the Go toolchain recorded in it (debug/buildinfo: the
// modules it was linked from, with their go.sum hashes), written with
// CycloneDX's own Go library: the main module is the BOM's subject, every
// dependency a library component with its package URL and hash, the
// toolchain a property. No time and no serial number: the same binary
// gives the same bytes. name is what the BOM describes (pvctl-v0.1.0-
// linux-amd64, the image ghcr.io/pvkit/controller:v0.1.0).
func SBOM(name, version, binary string) ([]byte, error) {
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		return nil, fmt.Errorf("the module graph of %s: %w", binary, err)
	}
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Component: &cdx.Component{Type: cdx.ComponentTypeApplication, Name: name, Version: version,
			BOMRef:     purl(info.Main.Path, version),
			PackageURL: purl(info.Main.Path, version)},
		Properties: &[]cdx.Property{{Name: "golang:toolchain", Value: info.GoVersion}},
	}
	var comps []cdx.Component
	for _, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		c := cdx.Component{Type: cdx.ComponentTypeLibrary, Name: m.Path, Version: m.Version,
			BOMRef: purl(m.Path, m.Version), PackageURL: purl(m.Path, m.Version)}
		if m.Sum != "" {
			c.Properties = &[]cdx.Property{{Name: "golang:go.sum", Value: m.Sum}}
		}
		comps = append(comps, c)
	}
	sort.Slice(comps, func(i, j int) bool { return comps[i].BOMRef < comps[j].BOMRef })
	bom.Components = &comps
	var b bytes.Buffer
	if err := cdx.NewBOMEncoder(&b, cdx.BOMFileFormatJSON).SetPretty(true).Encode(bom); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func purl(path, version string) string { return "pkg:golang/" + path + "@" + version }
