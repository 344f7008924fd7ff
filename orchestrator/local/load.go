package local

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pvkit/pvkit/orchestrator/embedded"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/orchestrator/api"
	pvapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha1"
	pvsapi "github.com/pvkit/pvkit/orchestrator/api/v1alpha2"
	"github.com/pvkit/pvkit/orchestrator/reconcilers/kit"
	"github.com/pvkit/pvkit/pkg/krm"
	"github.com/pvkit/pvkit/pkg/validate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// input is what the files given to pvctl run hold.
type input struct {
	variants     []*pvapi.PackageVariant
	sets         []*pvsapi.PackageVariantSet
	repositories []*porchconfig.Repository
	others       []client.Object // injection and selection candidates
	// remote are the objects of other clusters (annotated ClusterAnnotation),
	// by cluster: health checks that name the cluster read them.
	remote map[string][]client.Object
	files  map[string]string // "<Kind>/<name>" -> file, for messages
	// annotations are the sets' and variants' annotations as their files
	// give them, by state.ControlKey: taken before pvctl's controls are
	// laid on the same objects (fileAnnotations).
	annotations map[string]map[string]string
}

// LocalConfigAnnotation marks an object that configures a package and is
// never applied to a cluster (kpt, ConfigSync); pvctl run skips it.
const LocalConfigAnnotation = "config.kubernetes.io/local-config"

// StdinName names standard input (-f -) in messages.
const StdinName = "(stdin)"

// inputError is a problem with the input: pvctl run writes nothing.
type inputError struct{ msgs []string }

func (e *inputError) Error() string { return strings.Join(e.msgs, "\n") }

// readInput reads YAML files, and the *.yaml / *.yml files below
// directories, in name order. Objects without a namespace get namespace;
// PackageVariants, PackageVariantSets and Repositories must be in it. A
// directory below one given that is one of skip (the run's repositories
// directory: `pvctl run -f .` in the fleet's directory read its state
// file) is not read.
func readInput(paths []string, namespace string, stdin []byte, skip ...string) (*input, error) {
	var skipped []os.FileInfo
	for _, d := range skip {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			skipped = append(skipped, st)
		}
	}
	var files []string
	fromStdin := false
	for _, p := range paths {
		if p == "-" {
			fromStdin = true
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return nil, &inputError{[]string{err.Error()}}
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && len(skipped) > 0 {
				if st, err := os.Stat(path); err == nil && slices.ContainsFunc(skipped, func(s os.FileInfo) bool { return os.SameFile(s, st) }) {
					return filepath.SkipDir
				}
			}
			if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, &inputError{[]string{err.Error()}}
		}
	}
	sort.Strings(files)
	in := &input{files: map[string]string{}}
	var msgs []string
	for _, f := range files {
		msgs = append(msgs, in.readFile(f, namespace)...)
	}
	if fromStdin {
		msgs = append(msgs, in.readBytes(StdinName, stdin, namespace)...)
	}
	if len(msgs) > 0 {
		return nil, &inputError{msgs}
	}
	return in, nil
}

func (in *input) readFile(file, namespace string) []string {
	b, err := os.ReadFile(file)
	if err != nil {
		return []string{err.Error()}
	}
	return in.readBytes(file, b, namespace)
}

// readBytes reads a file's objects; it returns a message per problem.
func (in *input) readBytes(file string, b []byte, namespace string) []string {
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(string(b)), OmitReaderAnnotations: true}).Read()
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return []string{fmt.Sprintf("%s: cannot parse: %s", file, strings.TrimSuffix(msg, ": node contents:"))}
	}
	var msgs []string
	for i, n := range nodes {
		if err := krm.CheckAliases(n.YNode()); err != nil {
			msgs = append(msgs, fmt.Sprintf("%s: object %d: %v", file, i, err))
			continue
		}
		if k := n.YNode().Kind; k != yaml.MappingNode {
			msgs = append(msgs, fmt.Sprintf("%s: object %d: a %s, not an object (a mapping of fields: apiVersion, kind, metadata...)", file, i, nodeKind(k)))
			continue
		}
		// A package's own configuration (its kptfile.kpt.dev ConfigMap, a
		// function's config) is marked local-config: kpt and ConfigSync
		// never apply it, so it is no cluster object either, and two
		// packages given together may both have one.
		if n.GetAnnotations()[LocalConfigAnnotation] == "true" {
			continue
		}
		if m := in.add(n, file, i, namespace); m != "" {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// MaxObjectSize bounds one object of the files: what an API server can
// store (etcd's default --max-request-bytes, 1.5 MiB).
const MaxObjectSize = 3 << 19

// add reads one object; it returns a message naming file, object and
// field when the object is not acceptable.
func (in *input) add(n *yaml.RNode, file string, index int, namespace string) string {
	apiVersion, kind := krm.TypeMeta(n.YNode())
	name := krm.Name(n.YNode())
	where := fmt.Sprintf("%s: %s %q", file, kind, name)
	switch {
	case kind == "" || apiVersion == "":
		return fmt.Sprintf("%s: object %d: `apiVersion` and `kind` are required", file, index)
	case name == "":
		return fmt.Sprintf("%s: %s %d in the file: `metadata.name` is required", file, kind, index)
	}
	// As the apiserver would: a name, label keys and values, annotation keys
	// and their size, the object's size.
	if msgs := metadataProblems(n); len(msgs) > 0 {
		return fmt.Sprintf("%s: %s", where, strings.Join(msgs, "; "))
	}
	if b, err := krm.JSON(n); err == nil && len(b) > MaxObjectSize {
		return fmt.Sprintf("%s: the object is %d bytes as JSON, at most %d, what an API server stores (etcd's default request bound)", where, len(b), MaxObjectSize)
	}
	key := kind + "/" + name
	if cl, ok := n.GetAnnotations()[ClusterAnnotation]; ok {
		key = cl + ":" + key // the same name on another cluster is another object
	}
	if prev, dup := in.files[key]; dup {
		return fmt.Sprintf("%s: defined again (first in %s)", where, prev)
	}
	in.files[key] = file
	ns := krm.Namespace(n.YNode())
	if ns == "" {
		ns = namespace
		if err := n.SetNamespace(ns); err != nil {
			return fmt.Sprintf("%s: %v", where, err)
		}
	}
	var typed client.Object
	switch apiVersion + " " + kind {
	case pvapi.GroupVersion.String() + " PackageVariant":
		v := &pvapi.PackageVariant{}
		typed, in.variants = v, append(in.variants, v)
	case pvsapi.GroupVersion.String() + " PackageVariantSet":
		v := &pvsapi.PackageVariantSet{}
		typed, in.sets = v, append(in.sets, v)
	case porchconfig.GroupVersion.String() + " Repository":
		v := &porchconfig.Repository{}
		typed, in.repositories = v, append(in.repositories, v)
	default:
		return in.addOther(n, where, apiVersion, kind)
	}
	if ns != namespace {
		return fmt.Sprintf("%s: `metadata.namespace` is %q; pvctl run serves one namespace, %q (--namespace)", where, ns, namespace)
	}
	// Unknown fields are errors, as kubectl's strict validation makes them,
	// and every problem is said at once.
	var problems []string
	for _, p := range krm.Decode(n, typed) {
		problems = append(problems, inputMessage(p))
	}
	if len(problems) == 0 {
		// The CRD's own schema, as the API server would apply it: its
		// bounds (at most 20 waves, a wave name of 63 characters, a
		// deadline of at least 1 s) and rules. A file a cluster would
		// refuse is refused here, before anything runs (20,000 waves cost
		// a plan 30 s and 329 MB before).
		problems = schemaProblems(typed)
	}
	if len(problems) > 0 {
		return fmt.Sprintf("%s: %s", where, joinProblems(problems))
	}
	return ""
}

// MaxProblemsSaid bounds the problems said of one object: a file of
// 20,000 unknown fields is refused in one line that names the first ones
// and counts the rest, not in 2 MB of text.
const MaxProblemsSaid = 20

// joinProblems is an object's problems on one line, at most
// MaxProblemsSaid of them named.
func joinProblems(problems []string) string {
	if len(problems) <= MaxProblemsSaid {
		return strings.Join(problems, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(problems[:MaxProblemsSaid], "; "), len(problems)-MaxProblemsSaid)
}

// addOther reads an object of any other kind (an injection or selection
// candidate), refusing a kind that looks like one of Porch's mistyped.
func (in *input) addOther(n *yaml.RNode, where, apiVersion, kind string) string {
	// A typo in a kind of Porch's groups (PackageVarient) must not turn
	// a variant into an injection candidate and delete its drafts.
	if g := krm.Group(apiVersion); g == pvapi.GroupVersion.Group || g == "porch.kpt.dev" {
		return fmt.Sprintf("%s: %s has no kind %s; pvctl run reads %s PackageVariant, %s PackageVariantSet and %s Repository from files",
			where, apiVersion, kind, pvapi.GroupVersion, pvsapi.GroupVersion, porchconfig.GroupVersion)
	} else if near := nearPorchGroup(g); near != "" {
		// config.porch.kpt.io: a typo would make a variant an injection
		// candidate, and a first run would do nothing, exit 0.
		return fmt.Sprintf("%s: API group %q is not %q (a typo?); pvctl run reads %s PackageVariant, %s PackageVariantSet and %s Repository from files",
			where, g, near, pvapi.GroupVersion, pvsapi.GroupVersion, porchconfig.GroupVersion)
	}
	// A kind the orchestrator's scheme knows (ConfigMap, Secret, every
	// built-in) is decoded as its Go type first: a value of the wrong type
	// is an input error naming its field, not a panic later.
	if msg := typeErrors(n, apiVersion, kind); msg != "" {
		return fmt.Sprintf("%s: %s", where, msg)
	}
	u := &unstructured.Unstructured{}
	b, err := krm.JSON(n)
	if err == nil {
		err = u.UnmarshalJSON(b)
	}
	if err != nil {
		return fmt.Sprintf("%s: %v", where, err)
	}
	if cl, ok := u.GetAnnotations()[ClusterAnnotation]; ok {
		return in.addRemote(u, where, cl)
	}
	in.others = append(in.others, u)
	return ""
}

// ClusterAnnotation puts an object of a file on another cluster: the one
// a health check names (spec.health.clusterExpr) reads it there, and no
// variant injects or selects it.
const ClusterAnnotation = "pvkit.dev/cluster"

// addRemote keeps an object of another cluster.
func (in *input) addRemote(u *unstructured.Unstructured, where, cluster string) string {
	if cluster == "" {
		return fmt.Sprintf("%s: annotation %s is empty; it names the cluster the object is on", where, ClusterAnnotation)
	}
	if in.remote == nil {
		in.remote = map[string][]client.Object{}
	}
	in.remote[cluster] = append(in.remote[cluster], u)
	return ""
}

// schemaProblems are what the CRD's schema says of an object of its kind.
func schemaProblems(o client.Object) []string {
	s, err := scheme()
	if err != nil {
		return []string{err.Error()}
	}
	gvk, err := apiutil.GVKForObject(o, s)
	if err != nil {
		return []string{err.Error()}
	}
	errs, err := embedded.SchemaProblems(context.Background(), gvk, o)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range errs {
		if e.Field == "" || e.Field == "<nil>" {
			out = append(out, e.ErrorBody())
		} else {
			out = append(out, fmt.Sprintf("`%s` %s", e.Field, e.ErrorBody()))
		}
	}
	return out
}

// readableKinds are the kinds pvctl run may inject and select: the
// defaults, the kinds of the objects in its user's own files (the user
// already has them; a Secret stays opt-in all the same), and what
// --readable-kinds names. The controller reads with its own rights, so
// there only the operator's list counts (docs/security.md).
func (in *input) readableKinds(extra []string) (kit.ReadableKinds, error) {
	entries := append(append([]string(nil), kit.DefaultReadableKinds...), extra...)
	all := in.others
	for _, cl := range sortedKeys(in.remote) {
		all = append(all[:len(all):len(all)], in.remote[cl]...)
	}
	for _, o := range all {
		gvk := o.GetObjectKind().GroupVersionKind()
		if gvk.Group == "" && gvk.Kind == "Secret" {
			continue
		}
		e := gvk.Kind
		if gvk.Group != "" {
			e += "." + gvk.Group
		}
		entries = append(entries, e)
	}
	k, err := kit.ParseReadableKinds(entries)
	return k.WithHint(pvctlKindsHint), err
}

// pvctlKindsHint is how a pvctl user allows more kinds: pvctl reads with
// its user's own rights, so no RBAC rule is involved.
const pvctlKindsHint = "pvctl run reads the kinds of the objects its files give (-f) or --sync applies; --readable-kinds names more"

// scheme is the orchestrator's, for typeErrors.
var scheme = sync.OnceValues(api.Scheme)

// typeErrors decodes an object of a kind the scheme knows into its Go type
// and returns its type errors ("" when none, or when the kind is unknown).
// Unknown fields of built-in kinds are left to the apiserver's rules.
func typeErrors(n *yaml.RNode, apiVersion, kind string) string {
	s, err := scheme()
	if err != nil {
		return err.Error()
	}
	obj, err := s.New(schema.FromAPIVersionAndKind(apiVersion, kind))
	if err != nil {
		return ""
	}
	var msgs []string
	for _, p := range krm.Decode(n, obj) {
		if p.Severity == fn.Error {
			msgs = append(msgs, p.Message)
		}
	}
	return joinProblems(msgs)
}

// metadataProblems checks an object's metadata as the apiserver does.
func metadataProblems(n *yaml.RNode) []string {
	var msgs []string
	if msg := validate.DNS1123Subdomain(krm.Name(n.YNode())); msg != "" {
		msgs = append(msgs, "`metadata.name` "+msg)
	}
	if ns := krm.Namespace(n.YNode()); ns != "" {
		if msg := validate.DNS1123Label(ns); msg != "" {
			msgs = append(msgs, "`metadata.namespace` "+msg)
		}
	}
	msgs = append(msgs, validate.Labels("metadata.labels", n.GetLabels())...)
	return append(msgs, validate.Annotations("metadata.annotations", n.GetAnnotations())...)
}

// nodeKind names a YAML node kind for a message.
func nodeKind(k yaml.Kind) string {
	switch k {
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar value"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// inputMessage is a decoding problem as pvctl run says it: an unknown field
// is refused here (kpt's functions ignore it with a warning), and a
// revision given as a name hints at workspaceName.
func inputMessage(p krm.Problem) string {
	msg := p.Message
	if p.Severity != fn.Error {
		msg = strings.TrimSuffix(msg, krm.Ignored) + "; refused, as kubectl's strict field validation refuses it"
	}
	if strings.HasSuffix(p.Field, "upstream.revision") && strings.HasSuffix(msg, "must be an integer, found a string") {
		msg += " (a revision is a number; a workspace or branch is named by `workspaceName`, as `workspaceName: main`)"
	}
	return msg
}

// nearPorchGroup is Porch's API group g is a likely typo of (at most three
// edits away, and not it), or "".
func nearPorchGroup(g string) string {
	for _, porch := range []string{pvapi.GroupVersion.Group, "porch.kpt.dev"} {
		if g != porch && krm.EditDistance(g, porch) <= 3 {
			return porch
		}
	}
	return ""
}
