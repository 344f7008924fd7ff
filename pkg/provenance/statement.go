package provenance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	pv "github.com/pvkit/pvkit/pkg/api/v1alpha1"
	"github.com/pvkit/pvkit/pkg/api/v1alpha2"
	"github.com/pvkit/pvkit/pkg/configinject"
	"github.com/pvkit/pvkit/pkg/kptfile"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/variant"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// The names the record uses.
const (
	// FileName is the record's file, at the package's root.
	FileName = "pvkit-provenance.yaml"
	// ObjectName is the record's ConfigMap.
	ObjectName = "pvkit-provenance"
	// SignatureNamespace is the SSH signature namespace of a statement: a
	// signature made for anything else (a release, a git commit) does not
	// verify as a statement's.
	SignatureNamespace = "pvkit-provenance"
	StatementType      = "https://in-toto.io/Statement/v1"
	PredicateType      = "https://slsa.dev/provenance/v1"
	BuildType          = "https://pvkit.dev/package-variant/v1"
	// DigestAlgorithm names a file's digest by meaning (package doc).
	DigestAlgorithm = "sha256ByMeaning"
)

// Statement is an in-toto Statement v1 with a SLSA Provenance v1 predicate.
type Statement struct {
	Type          string       `json:"_type"`
	Subject       []Descriptor `json:"subject"`
	PredicateType string       `json:"predicateType"`
	Predicate     Predicate    `json:"predicate"`
}

// Descriptor is in-toto's ResourceDescriptor (the fields pvkit uses).
type Descriptor struct {
	Name        string            `json:"name,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Digest      map[string]string `json:"digest,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Predicate is SLSA Provenance v1's.
type Predicate struct {
	BuildDefinition BuildDefinition `json:"buildDefinition"`
	RunDetails      RunDetails      `json:"runDetails"`
}

// BuildDefinition says what made the package from what.
type BuildDefinition struct {
	BuildType            string       `json:"buildType"`
	ExternalParameters   External     `json:"externalParameters"`
	InternalParameters   Internal     `json:"internalParameters"`
	ResolvedDependencies []Descriptor `json:"resolvedDependencies,omitempty"`
}

// External are the parameters a user gave: the variant, and the package
// revision the record was written for.
type External struct {
	Variant    VariantRef        `json:"variant"`
	Upstream   map[string]string `json:"upstream,omitempty"`
	Downstream map[string]string `json:"downstream,omitempty"`
	Revision   *RevisionRef      `json:"revision,omitempty"`
	// Parameters are the variant's spec as the chain read it (package
	// context, injectors, pipeline, labels, annotations, the upstream and
	// downstream): with the upstream the lock pins, the injected objects'
	// digests and the functions below, what a rebuild of the package
	// needs. A record written before pvkit recorded them has none.
	Parameters *pv.PackageVariantSpec `json:"parameters,omitempty"`
	// Group names the group the variant deploys a member of, when its set
	// names one (rule package-groups): the group's package, the member,
	// and the group's package revision the member's upstream comes from.
	Group map[string]string `json:"group,omitempty"`
}

// RevisionRef names the package revision a record was written for: a
// record copied into another revision (Porch's copy, an upgrade draft
// before pvkit writes it, a file pasted by hand) does not describe it.
type RevisionRef struct {
	Name       string `json:"name"`
	Repository string `json:"repository"`
	Package    string `json:"package"`
	Workspace  string `json:"workspace,omitempty"`
}

// VariantRef names the PackageVariant that made the package.
type VariantRef struct {
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	UID        string `json:"uid,omitempty"`
	Generation int64  `json:"generation,omitempty"`
}

// Internal are the functions that ran, in order.
type Internal struct {
	Functions []Function `json:"functions"`
}

// Function is one function run: pvkit's own (Builtin: pvkit's version) or
// one of the Kptfile's pipeline (Image as written there).
type Function struct {
	Name         string            `json:"name"`
	Stage        string            `json:"stage"` // pvkit, mutators or validators
	Builtin      string            `json:"builtin,omitempty"`
	Image        string            `json:"image,omitempty"`
	ConfigDigest map[string]string `json:"configDigest,omitempty"`
}

// RunDetails names the builder.
type RunDetails struct {
	Builder    Builder      `json:"builder"`
	Byproducts []Descriptor `json:"byproducts,omitempty"`
}

// Builder is pvkit's controller or pvctl, with pvkit's version.
type Builder struct {
	ID      string            `json:"id"`
	Version map[string]string `json:"version,omitempty"`
}

// Inputs are what a statement records besides the package's files.
type Inputs struct {
	Variant *pv.PackageVariant
	// Generation is the variant's metadata.generation.
	Generation int64
	// Builder is "controller" or "pvctl"; Version pvkit's version.
	Builder, Version string
	// Revision is the package revision the record is written for.
	Revision *RevisionRef
	// Origins are the files whose content pvkit did not build, by path,
	// with where it came from (OriginEdited, or an adoption's words): the
	// statement says so on the file's subject (OriginAnnotation), so that
	// it never vouches for them as pvkit's build, and a later upgrade
	// knows them for a person's (Record.PersonsFiles), with where a
	// person's edit was found, its digest there and who approved it
	// (Origin). A path not in the package is left out.
	Origins Origins
}

// OriginAnnotation, on a subject of the statement, says that the file's
// content is not pvkit's build and where it came from.
const OriginAnnotation = "pvkit.dev/origin"

// OriginEdited is the origin of a file a person changed after pvkit wrote
// it, and pvkit kept.
const OriginEdited = "edited by a person"

// Signer signs a statement (sshsig.Sign with a key, in the caller).
type Signer func(statement []byte) ([]byte, error)

// Build makes the statement for a package's files (the record's own file
// left out).
func Build(files map[string]string, in Inputs) (*Statement, error) {
	if in.Variant == nil {
		return nil, fmt.Errorf("provenance: no variant")
	}
	content := WithoutRecord(files)
	st := &Statement{Type: StatementType, PredicateType: PredicateType}
	digests := variant.FileDigests(content)
	for _, name := range krm.SortedKeys(content) {
		d := Descriptor{Name: name, Digest: map[string]string{DigestAlgorithm: hexOf(digests[name])}}
		if o := in.Origins[name]; o.Words != "" {
			d.Annotations = o.annotations()
		}
		st.Subject = append(st.Subject, d)
	}
	v := in.Variant
	bd := &st.Predicate.BuildDefinition
	bd.BuildType = BuildType
	bd.ExternalParameters.Variant = VariantRef{Namespace: v.Metadata.Namespace, Name: v.Metadata.Name, UID: v.Metadata.UID, Generation: in.Generation}
	if u := v.Spec.Upstream; u != nil {
		up := map[string]string{"repo": u.Repo, "package": u.Package, "workspaceName": u.WorkspaceName, "semver": u.Semver}
		if u.Revision != 0 {
			up["revision"] = fmt.Sprint(u.Revision)
		}
		bd.ExternalParameters.Upstream = nonEmpty(up)
	}
	if d := v.Spec.Downstream; d != nil {
		bd.ExternalParameters.Downstream = nonEmpty(map[string]string{"repo": d.Repo, "package": d.Package})
	}
	bd.ExternalParameters.Revision = in.Revision
	spec := v.Spec
	bd.ExternalParameters.Parameters = &spec
	bd.ExternalParameters.Group = nonEmpty(map[string]string{"package": v.Metadata.Labels[v1alpha2.GroupLabel],
		"member": v.Metadata.Labels[v1alpha2.MemberLabel], "revision": v.Metadata.Annotations[v1alpha2.GroupRevisionAnnotation]})
	// Only the Kptfile and the files that name an injected object are
	// read as objects (each file's digest above parsed it already).
	parse := map[string]string{}
	for name, text := range content {
		if name == kptfile.FileName || strings.Contains(text, configinject.InjectedAnnotation) {
			parse[name] = text
		}
	}
	items, err := krm.FilesToItems(parse)
	if err != nil {
		return nil, err
	}
	kf, err := kptfile.Find(items)
	if err != nil {
		return nil, err
	}
	if dep := upstreamDependency(kf); dep != nil {
		bd.ResolvedDependencies = append(bd.ResolvedDependencies, *dep)
	}
	bd.ResolvedDependencies = append(bd.ResolvedDependencies, injected(items, v.Metadata.Namespace)...)
	bd.InternalParameters.Functions = append(builtins(v, in.Version), pipeline(kf, content)...)
	st.Predicate.RunDetails = RunDetails{
		Builder:    Builder{ID: "https://pvkit.dev/" + in.Builder, Version: map[string]string{"pvkit": in.Version}},
		Byproducts: []Descriptor{{Name: "package", Digest: map[string]string{DigestAlgorithm: packageDigest(st.Subject)}}},
	}
	return st, nil
}

// Marshal is the statement's JSON as the record holds it: indented, one
// field a line (a reviewer reads it in a diff), ending in a newline.
func (s *Statement) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// Stamp returns files with the record written for them: the statement and,
// when sign is not nil, its signature. The files given are not changed.
func Stamp(files map[string]string, in Inputs, sign Signer) (map[string]string, error) {
	st, err := Build(files, in)
	if err != nil {
		return nil, err
	}
	stmt, err := st.Marshal()
	if err != nil {
		return nil, err
	}
	var sig []byte
	if sign != nil {
		if sig, err = sign(stmt); err != nil {
			return nil, fmt.Errorf("signing the provenance statement: %w", err)
		}
	}
	out := make(map[string]string, len(files)+1)
	for k, v := range files {
		out[k] = v
	}
	out[FileName] = record(stmt, sig)
	return out, nil
}

// record is the record's file: the ConfigMap with the statement (and the
// signature) as block scalars.
func record(stmt, sig []byte) string {
	var b strings.Builder
	b.WriteString("# Written by pvkit: where this package came from (in-toto statement, SLSA provenance).\n")
	b.WriteString("# Check it with `pvctl verify`; an edit of the package or of this file shows.\n")
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + ObjectName + "\n")
	b.WriteString("  annotations:\n    config.kubernetes.io/local-config: \"true\"\ndata:\n")
	block := func(key string, v []byte) {
		b.WriteString("  " + key + ": |\n")
		for _, line := range strings.Split(strings.TrimRight(string(v), "\n"), "\n") {
			b.WriteString("    " + line + "\n")
		}
	}
	if len(sig) > 0 {
		block("signature", sig)
	}
	block("statement", stmt)
	return b.String()
}

// upstreamDependency is the upstream as the Kptfile's upstreamLock pins it.
func upstreamDependency(kf *kptfile.Kptfile) *Descriptor {
	if kf == nil {
		return nil
	}
	n := kf.Item.YNode()
	repo, _ := krm.ScalarAt(n, "upstreamLock", "git", "repo")
	commit, _ := krm.ScalarAt(n, "upstreamLock", "git", "commit")
	if repo == "" && commit == "" {
		return nil
	}
	dir, _ := krm.ScalarAt(n, "upstreamLock", "git", "directory")
	ref, _ := krm.ScalarAt(n, "upstreamLock", "git", "ref")
	d := &Descriptor{Name: "upstream", URI: repo, Annotations: nonEmpty(map[string]string{"directory": dir, "ref": ref})}
	if commit != "" {
		d.Digest = map[string]string{"gitCommit": commit}
	}
	return d
}

// injected are the objects config-inject copied in: each injection point
// that names its source (configinject.InjectedAnnotation), with the digest
// of the field copied (data of a ConfigMap, spec otherwise), which is the
// field as it was read.
func injected(items []*yaml.RNode, namespace string) []Descriptor {
	var out []Descriptor
	for _, it := range items {
		from := krm.Annotation(it, configinject.InjectedAnnotation)
		if from == "" {
			continue
		}
		apiVersion, kind := krm.TypeMeta(it.YNode())
		field := "spec"
		if apiVersion == "v1" && kind == "ConfigMap" {
			field = "data"
		}
		d := Descriptor{Name: fmt.Sprintf("injected %s %s %s/%s", apiVersion, kind, namespace, from),
			Annotations: map[string]string{"field": field, "point": krm.Name(it.YNode()), "file": krm.Path(it)}}
		if v := krm.Field(it.YNode(), field); v != nil {
			d.Digest = map[string]string{DigestAlgorithm: nodeDigest(v)}
		}
		out = append(out, d)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// builtins are pvkit's three mutations with digests of their configs.
func builtins(v *pv.PackageVariant, version string) []Function {
	configs := []struct {
		name string
		cfg  any
	}{{"package-context", v.Spec.PackageContext}, {"pipeline-prepend", struct {
		Owner    string       `json:"owner"`
		Pipeline *pv.Pipeline `json:"pipeline"`
	}{v.Metadata.Name, v.Spec.Pipeline}}, {"config-inject", v.Spec.Injectors}}
	out := make([]Function, 0, len(configs))
	for _, c := range configs {
		b, _ := json.Marshal(c.cfg)
		sum := sha256.Sum256(b)
		out = append(out, Function{Name: c.name, Stage: "pvkit", Builtin: "pvkit " + version,
			ConfigDigest: map[string]string{"sha256": hex.EncodeToString(sum[:])}})
	}
	return out
}

// pipeline are the Kptfile pipeline's functions (mutators, then
// validators), as written there, each with a digest of its config.
func pipeline(kf *kptfile.Kptfile, files map[string]string) []Function {
	if kf == nil {
		return nil
	}
	var out []Function
	for _, list := range []string{kptfile.Mutators, kptfile.Validators} {
		entries, err := kf.Pipeline(list)
		if err != nil {
			continue
		}
		for i, e := range entries {
			f := Function{Stage: list}
			f.Image, _ = krm.ScalarAt(e, "image")
			if f.Image == "" {
				f.Image, _ = krm.ScalarAt(e, "exec")
			}
			f.Name, _ = krm.ScalarAt(e, "name")
			if f.Name == "" {
				f.Name = fmt.Sprintf("%s[%d]", list, i)
			}
			if p, _ := krm.ScalarAt(e, "configPath"); p != "" {
				f.ConfigDigest = digestOf(files, p)
			} else if m := krm.Field(e, "configMap"); m != nil {
				f.ConfigDigest = map[string]string{DigestAlgorithm: nodeDigest(m)}
			}
			out = append(out, f)
		}
	}
	return out
}

// packageDigest is the package's digest: the sha256 of its files' names
// and digests, one "name digest" line each, in name order.
func packageDigest(subject []Descriptor) string {
	h := sha256.New()
	for _, s := range subject {
		fmt.Fprintf(h, "%s %s\n", s.Name, s.Digest[DigestAlgorithm])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// digestOf is one file's digest by meaning (none when the file is absent).
func digestOf(files map[string]string, name string) map[string]string {
	b, ok := files[name]
	if !ok {
		return nil
	}
	return map[string]string{DigestAlgorithm: hexOf(variant.Fingerprint(map[string]string{name: b}))}
}

// nodeDigest is the sha256 of a YAML node as canonical JSON.
func nodeDigest(n *yaml.Node) string {
	b, err := krm.JSON(yaml.NewRNode(n))
	if err != nil {
		b = []byte(yaml.NewRNode(n).MustString())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func hexOf(fingerprint string) string { return strings.TrimPrefix(fingerprint, "sha256:") }

// WithoutRecord is files without the record's own file (the files
// themselves when they have none).
func WithoutRecord(files map[string]string) map[string]string {
	if _, ok := files[FileName]; !ok {
		return files
	}
	out := make(map[string]string, len(files))
	for k, v := range files {
		if k != FileName {
			out[k] = v
		}
	}
	return out
}

func nonEmpty(m map[string]string) map[string]string {
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
