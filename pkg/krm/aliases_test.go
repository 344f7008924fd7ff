package krm

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// aliasBomb is a ConfigMap whose aliases nest depth levels, nine wide: about
// 500 bytes for 9^7 = 4.8 million strings at depth 7.
func aliasBomb(depth int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= depth; i++ {
		p := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "  l%d: &l%d [%s]\n", i, i, strings.Repeat(p+", ", 8)+p)
	}
	return b.String()
}

// A package file with a 7-level alias bomb is refused while parsing, fast
// and without expanding it; so is a ResourceList holding one.
func TestAliasBombRefused(t *testing.T) {
	bomb := aliasBomb(7)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := FilesToItems(map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: p\n", "bomb.yaml": bomb})
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.HasPrefix(err.Error(), `"bomb.yaml": its YAML aliases expand`) {
		t.Fatalf("err = %v", err)
	}
	// Guards against expansion (which takes minutes and gigabytes), not a timing.
	if took > 5*time.Second || after.TotalAlloc-before.TotalAlloc > 100<<20 {
		t.Fatalf("refusing took %s and %d bytes", took, after.TotalAlloc-before.TotalAlloc)
	}
	rl := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- " + strings.ReplaceAll(strings.TrimSuffix(bomb, "\n"), "\n", "\n  ") + "\n"
	if _, err := ParseResourceList([]byte(rl)); err == nil || !strings.Contains(err.Error(), "the input ResourceList: its YAML aliases expand") {
		t.Fatalf("ResourceList: %v", err)
	}
}

// Shared anchors used as intended pass.
func TestModestAliasesPass(t *testing.T) {
	doc := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n  labels: &l {app: web, tier: front}\nspec:\n  a: *l\n  b: *l\n  c: *l\n"
	if _, err := FilesToItems(map[string]string{"ok.yaml": doc}); err != nil {
		t.Fatal(err)
	}
	if err := CheckAliases(yaml.MustParse(aliasBomb(3)).YNode()); err != nil { // 9^3 = 729 strings
		t.Fatalf("three levels are affordable: %v", err)
	}
}

// An alias whose anchor is outside the item would be written undefined.
func TestAnchorOutsideItemRefused(t *testing.T) {
	rl := `apiVersion: config.kubernetes.io/v1
kind: ResourceList
functionConfig:
  apiVersion: v1
  kind: ConfigMap
  metadata: {name: cfg}
  data: &d {env: prod}
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: web}
  data: *d
`
	_, err := ParseResourceList([]byte(rl))
	if err == nil || err.Error() != "`items[0]` (ConfigMap \"web\") of the input ResourceList: the alias *d refers to an anchor outside this object; written alone, the object would be invalid YAML" {
		t.Fatalf("err = %v", err)
	}
}

// Two aliases of one anchor compare equal without walking it; a deep chain
// of aliases compares in linear time.
func TestSemanticEqualDoesNotExpand(t *testing.T) {
	n := yaml.MustParse(aliasBomb(12)).YNode() // 9^12 strings if expanded
	l11 := Field(Field(n, "data"), "l11")
	l12 := Field(Field(n, "data"), "l12")
	start := time.Now()
	if !SemanticEqual(l12.Content[0], l12.Content[8]) || SemanticEqual(l11, l12.Content[0]) == false {
		t.Fatal("aliases of one anchor are equal")
	}
	if time.Since(start) > 5*time.Second {
		t.Fatal("the comparison expanded the aliases")
	}
}

// Issue 18 #5: an anchor on a 10 KB scalar, nested 100 x 100, is 10.7 KB
// and about 200 nodes as written, 10^4 nodes expanded (which the old bound
// on nodes let through) and 100 MB expanded. Refused, without expanding it.
func TestScalarAliasBombRefused(t *testing.T) {
	doc := scalarBomb(10_000, 100)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := FilesToItems(map[string]string{"bomb.yaml": doc})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.HasPrefix(err.Error(), `"bomb.yaml": its YAML aliases expand its `) || !strings.Contains(err.Error(), "bytes to more than") {
		t.Fatalf("err = %v", err)
	}
	if after.TotalAlloc-before.TotalAlloc > 20<<20 {
		t.Fatalf("refusing allocated %d bytes", after.TotalAlloc-before.TotalAlloc)
	}
}

// BenchmarkScalarAliasBombRefused: the 10.7 KB document of issue 18 #5 (100
// MB expanded), refused (make bench-security).
func BenchmarkScalarAliasBombRefused(b *testing.B) {
	doc := map[string]string{"bomb.yaml": scalarBomb(10_000, 100)}
	for i := 0; i < b.N; i++ {
		if _, err := FilesToItems(doc); err == nil {
			b.Fatal("not refused")
		}
	}
}

// BenchmarkLargestAcceptedExpansion: a document at the alias bound (10x its
// size + 64 KiB) converted to JSON, as every decoder does with it.
func BenchmarkLargestAcceptedExpansion(b *testing.B) {
	doc := scalarBomb(1_000, 8) // 1.1 KB written, 64 KB expanded: just under the bound
	n, err := yaml.Parse(doc)
	if err != nil || CheckAliases(n.YNode()) != nil {
		b.Fatalf("%v %v", err, CheckAliases(n.YNode()))
	}
	for i := 0; i < b.N; i++ {
		if _, err := n.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

// Issue 20 #9: the bound costs a document without aliases one walk and no
// allocation (a map entry per node made the functions 1.3-1.5x the kyaml
// floor at 1,000 resources); a document with aliases is still measured.
func TestAliasFreeDocumentCostsNoAllocation(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c%d, labels: {app: web}}\n  data: {k: v}\n", i)
	}
	doc := yaml.MustParse(b.String()).YNode()
	if allocs := testing.AllocsPerRun(10, func() {
		if err := CheckAliases(doc); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Fatalf("CheckAliases allocated %v times on a document without aliases", allocs)
	}
	if aliases, err := checkAliases(doc); aliases || err != nil {
		t.Fatalf("checkAliases = %v, %v", aliases, err)
	}
	if aliases, err := checkAliases(yaml.MustParse(aliasBomb(3)).YNode()); !aliases || err != nil {
		t.Fatalf("three levels of aliases: checkAliases = %v, %v", aliases, err)
	}
	if aliases, err := checkAliases(yaml.MustParse(aliasBomb(7)).YNode()); !aliases || err == nil {
		t.Fatalf("seven levels of aliases: checkAliases = %v, %v", aliases, err)
	}
}
