package provenance

import (
	"errors"
	"fmt"
	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"reflect"
	"strings"
	"testing"
)

// What a rebuild needs, read back from the record Stamp wrote: the
// variant's spec, the upstream at its commit, the injected object made
// again from its injection point (its digest the recorded one).
func TestRecordSaysWhatARebuildNeeds(t *testing.T) {
	files, err := Stamp(pkg(), inputs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := mustRead(t, files).Rebuild()
	if err != nil {
		t.Fatal(err)
	}
	if rb.Commit != "0123456789abcdef0123456789abcdef01234567" || rb.Ref != "app/v3" || rb.URL != "https://git.example/blueprints" || rb.Directory != "app" ||
		rb.Builder != "pvctl" || rb.Version != "v0.1.0-test" || rb.Variant.Name != "app-prod" || rb.Parameters.Upstream.Revision != 3 {
		t.Fatalf("rebuild inputs: %+v", rb)
	}
	if len(rb.Injected) != 1 || rb.Injected[0].String() != "injected ConfigMap team-a/prod-settings" || rb.Injected[0].File != "settings.yaml" || rb.Injected[0].Field != "data" {
		t.Fatalf("injected: %+v", rb.Injected)
	}
	objs, problems, err := rb.Objects(files)
	want := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "prod-settings", "namespace": "team-a"}, "data": map[string]any{"size": "large"}}
	if err != nil || len(problems) != 0 || len(objs) != 1 || !reflect.DeepEqual(objs[0], want) {
		t.Fatalf("objects: %v %v %v", objs, problems, err)
	}
}

// Every reason a record cannot be rebuilt from, and every injected object
// the package does not hold as it was read, named.
func TestRebuildRefusals(t *testing.T) {
	files, err := Stamp(pkg(), inputs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec := mustRead(t, files)
	bd := &rec.Statement.Predicate.BuildDefinition
	params, deps := bd.ExternalParameters.Parameters, bd.ResolvedDependencies

	bd.ExternalParameters.Parameters = nil
	if _, err := rec.Rebuild(); !errors.Is(err, ErrNoParameters) {
		t.Fatalf("no parameters: %v", err)
	}
	bd.ExternalParameters.Parameters = params
	bd.ResolvedDependencies = deps[1:]
	if _, err := rec.Rebuild(); err == nil || err.Error() != "pvkit-provenance.yaml: field data.statement: predicate.buildDefinition.resolvedDependencies: no upstream with a gitCommit: nothing to rebuild from" {
		t.Fatalf("no upstream: %v", err)
	}
	bd.ResolvedDependencies = append([]Descriptor{{Name: "a stranger"}}, deps...)
	if _, err := rec.Rebuild(); err == nil || err.Error() != `pvkit-provenance.yaml: field data.statement: predicate.buildDefinition.resolvedDependencies: "a stranger" is neither the upstream nor an injected object` {
		t.Fatalf("a dependency of no known kind: %v", err)
	}
	bd.ResolvedDependencies = deps
	rb, err := rec.Rebuild()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, old, new, want string
	}{
		{"changed", "size: large", "size: small", "injected ConfigMap team-a/prod-settings: the package holds data with digest "},
		{"point gone", "name: settings\n", "name: other\n", "injected ConfigMap team-a/prod-settings: the package has no injection point settings in settings.yaml that names it"},
		{"field gone", "data:\n  size: large\n", "", "injected ConfigMap team-a/prod-settings: the injection point settings in settings.yaml has no data"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := pkg()
			f["settings.yaml"] = strings.Replace(f["settings.yaml"], c.old, c.new, 1)
			_, problems, err := rb.Objects(f)
			if err != nil || len(problems) != 1 || !strings.HasPrefix(problems[0], c.want) {
				t.Fatalf("problems %q, %v; want %q", problems, err, c.want)
			}
		})
	}
}

// A point nothing was injected into while the cluster had objects of its
// type (configinject.NoMatch) gets a stand-in of that type, named so no
// injector selects it; a point whose type the cluster did not have, or a
// point injected, gets none.
func TestRebuildStandIns(t *testing.T) {
	files := pkg()
	files["team.yaml"] = "apiVersion: example.com/v1\nkind: Team\nmetadata:\n  name: owner\n  annotations:\n    kpt.dev/config-injection: optional\nspec:\n  lead: unknown\n"
	files["db.yaml"] = "apiVersion: example.com/v1\nkind: Database\nmetadata:\n  name: db\n  annotations:\n    kpt.dev/config-injection: optional\nspec: {}\n"
	files["Kptfile"] += "status:\n  conditions:\n" +
		"  - {type: config.injection.Team.owner, status: \"False\", reason: NoResourceSelected, message: \"no resource matched any injection selector for this injection point\"}\n" +
		"  - {type: config.injection.Database.db, status: \"False\", reason: NoResourceSelected, message: \"no in-cluster resources of type example.com/v1.Database\"}\n" +
		"  - {type: config.injection.ConfigMap.settings, status: \"True\", reason: ConfigInjected, message: injected}\n"
	in := inputs()
	stamped, err := Stamp(files, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := mustRead(t, stamped).Rebuild()
	if err != nil {
		t.Fatal(err)
	}
	got, err := rb.StandIns(stamped, "team-a")
	want := []map[string]any{{"apiVersion": "example.com/v1", "kind": "Team", "metadata": map[string]any{"name": StandIn, "namespace": "team-a"}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("stand-ins: %v %v", got, err)
	}
	rb.Parameters.Injectors = append(rb.Parameters.Injectors, pvInjector(StandIn))
	if got, _ := rb.StandIns(stamped, "team-a"); len(got) != 1 || got[0]["metadata"].(map[string]any)["name"] != StandIn+"-x" {
		t.Fatalf("a stand-in an injector names: %v", got)
	}
}

func pvInjector(name string) pv.InjectionSelector { return pv.InjectionSelector{Name: name} }

// hugeRecord is a package of n injection points and a rebuild whose
// record lists n injected objects and n injectors named StandIn,
// StandIn-x, StandIn-x-x, ...: what a forged record may hold.
func hugeRecord(n int) (*Rebuild, map[string]string) {
	files := map[string]string{"Kptfile": "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: app\nstatus:\n  conditions:\n"}
	var points, conds strings.Builder
	rb := &Rebuild{Parameters: &pv.PackageVariantSpec{}}
	name := StandIn
	for i := 0; i < n; i++ {
		fmt.Fprintf(&points, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p%d\n  annotations:\n    kpt.dev/config-injection: optional\ndata: {k: v}\n", i)
		fmt.Fprintf(&conds, "  - {type: config.injection.ConfigMap.p%d, status: \"False\", reason: NoResourceSelected, message: \"no resource matched any injection selector for this injection point\"}\n", i)
		rb.Injected = append(rb.Injected, Injected{APIVersion: "v1", Kind: "ConfigMap", Namespace: "ns", Name: fmt.Sprintf("o%d", i), Field: "data", File: "points.yaml", Point: fmt.Sprintf("p%d", i)})
		rb.Parameters.Injectors = append(rb.Parameters.Injectors, pv.InjectionSelector{Name: name})
		name += "-x"
	}
	files["points.yaml"] = points.String()
	files["Kptfile"] += conds.String()
	return rb, files
}

// A record of many injected objects and adversarial injector names is
// read in time linear in its size (each was a scan of the package, and
// the stand-in's name a pass over the injectors per name taken): the
// stand-in is named past every injector, and each entry is named.
func TestHugeRecordIsReadLinearly(t *testing.T) {
	rb, files := hugeRecord(2000)
	objs, problems, err := rb.Objects(files)
	if err != nil || len(objs) != 0 || len(problems) != 2000 || !strings.HasSuffix(problems[0], "the package has no injection point p0 in points.yaml that names it") {
		t.Fatalf("objects %d, problems %d (%v), %v", len(objs), len(problems), problems[:1], err)
	}
	standIns, err := rb.StandIns(files, "ns")
	if err != nil || len(standIns) != 1 {
		t.Fatalf("stand-ins: %v, %v", standIns, err)
	}
	if got := standIns[0]["metadata"].(map[string]any)["name"].(string); got != StandIn+strings.Repeat("-x", 2000) {
		t.Fatalf("the stand-in is named %.40q... (%d bytes), want past every injector", got, len(got))
	}
}

// Reading a huge record: ns/entry stays flat from 1,000 to 10,000 entries.
func BenchmarkHugeRecord(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		rb, files := hugeRecord(n)
		b.Run(fmt.Sprintf("%dentries", n), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := rb.Objects(files); err != nil {
					b.Fatal(err)
				}
				if _, err := rb.StandIns(files, "ns"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
	}
}
