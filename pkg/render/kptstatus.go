package render

import (
	"fmt"
	"path"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// kpt v1.0's render status (rule: kpt-render-status): the root Kptfile's
// `status.conditions[type=Rendered]` and `status.renderStatus`, written on
// success and on failure, with the fields and values kpt v1.0 writes and no
// field of pvkit's own (kpt v1.0 decodes the Kptfile strictly and would
// refuse one). kpt re-marshals the whole Kptfile; pvkit sets the `status`
// node and keeps the rest of the file as it was, comments included.

// The root Kptfile's annotations a render reads, as kpt v1.0 reads them
// ("true", in any case, turns them on).
const (
	// SaveOnRenderFailureAnnotation keeps a failed render's partly rendered
	// resources (kpt v1.0; with Options.KptStatus).
	SaveOnRenderFailureAnnotation = "kpt.dev/save-on-render-failure"
	// BFSRenderingAnnotation renders top-down: a package's pipeline before
	// its subpackages', seeing its own resources and its descendants'
	// (kpt v1.0, Porch v1.5.3).
	BFSRenderingAnnotation = "kpt.dev/bfs-rendering"
)

// The Rendered condition's type and reasons.
const (
	ConditionRendered   = "Rendered"
	ReasonRenderSuccess = "RenderSuccess"
	ReasonRenderFailed  = "RenderFailed"
)

type kptRenderStatus struct {
	MutationSteps   []kptStep `yaml:"mutationSteps,omitempty"`
	ValidationSteps []kptStep `yaml:"validationSteps,omitempty"`
	ErrorSummary    string    `yaml:"errorSummary,omitempty"`
}

type kptStep struct {
	Name           string      `yaml:"name,omitempty"`
	Image          string      `yaml:"image,omitempty"`
	Exec           string      `yaml:"exec,omitempty"`
	ExecutionError string      `yaml:"executionError,omitempty"`
	Stderr         string      `yaml:"stderr,omitempty"`
	ExitCode       int         `yaml:"exitCode"`
	Results        []kptResult `yaml:"results,omitempty"`
	ErrorResults   []kptResult `yaml:"errorResults,omitempty"`
}

type kptResult struct {
	Message     string            `yaml:"message,omitempty"`
	Severity    string            `yaml:"severity,omitempty"`
	ResourceRef *kptRef           `yaml:"resourceRef,omitempty"`
	Field       *kptField         `yaml:"field,omitempty"`
	File        *kptFile          `yaml:"file,omitempty"`
	Tags        map[string]string `yaml:"tags,omitempty"`
}

type kptRef struct {
	APIVersion string `yaml:"apiVersion,omitempty"`
	Kind       string `yaml:"kind,omitempty"`
	Name       string `yaml:"name,omitempty"`
	Namespace  string `yaml:"namespace,omitempty"`
}

type kptField struct {
	Path          string `yaml:"path,omitempty"`
	CurrentValue  string `yaml:"currentValue,omitempty"`
	ProposedValue string `yaml:"proposedValue,omitempty"`
}

type kptFile struct {
	Path  string `yaml:"path,omitempty"`
	Index int    `yaml:"index,omitempty"`
}

type kptCondition struct {
	Type    string `yaml:"type"`
	Status  string `yaml:"status"`
	Reason  string `yaml:"reason,omitempty"`
	Message string `yaml:"message,omitempty"`
}

// kptStatusOf is the render status as kpt v1.0 writes it: nil when no
// step ran or was tried. A skipped step (`when` false) is a step with exit
// code 0 and its info result saying so: kpt's steps have no field for it.
func kptStatusOf(st *Status) *kptRenderStatus {
	if len(st.Runs) == 0 {
		return nil
	}
	rs := &kptRenderStatus{}
	var summary []string
	for _, r := range st.Runs {
		s := kptStep{Name: r.StepName, Image: r.Image, Exec: r.Exec, ExecutionError: r.ExecutionError, Stderr: r.Stderr, ExitCode: r.ExitCode}
		if r.ExecutionError == "" {
			for _, res := range r.Results {
				s.Results = append(s.Results, kptResultOf(res))
				if res.Severity == fn.Error {
					s.ErrorResults = append(s.ErrorResults, kptResultOf(res))
				}
			}
		}
		if r.Validator {
			rs.ValidationSteps = append(rs.ValidationSteps, s)
		} else {
			rs.MutationSteps = append(rs.MutationSteps, s)
		}
	}
	if st.Err != "" { // kpt's order: the mutation steps' failures, then the validation steps'
		for _, steps := range [][]kptStep{rs.MutationSteps, rs.ValidationSteps} {
			for _, s := range steps {
				name := s.Name
				if name == "" {
					name = s.Image
				}
				if name == "" {
					name = s.Exec
				}
				switch {
				case s.ExecutionError != "":
					summary = append(summary, name+": "+s.ExecutionError)
				case s.ExitCode != 0:
					summary = append(summary, fmt.Sprintf("%s: exit code %d", name, s.ExitCode))
				}
			}
		}
		rs.ErrorSummary = strings.Join(summary, "\n")
	}
	return rs
}

func kptResultOf(r *fn.Result) kptResult {
	out := kptResult{Message: r.Message, Severity: string(r.Severity), Tags: r.Tags}
	if ref := r.ResourceRef; ref != nil {
		out.ResourceRef = &kptRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, Namespace: ref.Namespace}
	}
	if f := r.Field; f != nil {
		out.Field = &kptField{Path: f.Path, CurrentValue: scalarString(f.CurrentValue), ProposedValue: scalarString(f.ProposedValue)}
	}
	if f := r.File; f != nil {
		out.File = &kptFile{Path: f.Path, Index: f.Index}
	}
	return out
}

// scalarString is a result field's value as kpt keeps it, a string ("" for
// none; a value of another kind in YAML).
func scalarString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}

// writeKptStatus sets the root Kptfile's Rendered condition (replacing the
// one there, other conditions kept, the new one last, as kpt does) and its
// renderStatus (removed when no step ran) in the file system. A render
// that left no root Kptfile has none to write into, as kpt has none.
func writeKptStatus(fs filesys.FileSystem, st *Status) error {
	if !fs.Exists(path.Join(root, kptfileName)) {
		return nil
	}
	rw := &kio.LocalPackageReadWriter{PackagePath: root, PreserveSeqIndent: true, PackageFileName: kptfileName,
		MatchFilesGlob: []string{kptfileName}, WrapBareSeqNode: true, FileSystem: filesys.FileSystemOrOnDisk{FileSystem: fs}}
	nodes, err := rw.Read()
	if err != nil {
		return fmt.Errorf("Kptfile: reading it to write the render status: %w", err)
	}
	var kf *yaml.RNode
	for _, n := range nodes {
		if n.GetKind() == "Kptfile" {
			kf = n
		}
	}
	if kf == nil {
		return fmt.Errorf("Kptfile: no Kptfile resource to write the render status into")
	}
	cond := kptCondition{Type: ConditionRendered, Status: "True", Reason: ReasonRenderSuccess}
	if st.Err != "" {
		cond = kptCondition{Type: ConditionRendered, Status: "False", Reason: ReasonRenderFailed, Message: st.Err}
	}
	status, err := kf.Pipe(yaml.LookupCreate(yaml.MappingNode, "status"))
	if err != nil {
		return fmt.Errorf("Kptfile: `status`: %w", err)
	}
	conds := yaml.NewListRNode()
	if old := status.Field("conditions"); old != nil && old.Value.YNode().Kind == yaml.SequenceNode {
		for _, c := range old.Value.Content() {
			if t := yaml.NewRNode(c).Field("type"); t == nil || yaml.GetValue(t.Value) != ConditionRendered {
				conds.YNode().Content = append(conds.YNode().Content, c)
			}
		}
	}
	c, err := toNode(cond)
	if err != nil {
		return err
	}
	conds.YNode().Content = append(conds.YNode().Content, c.YNode())
	if err := status.PipeE(yaml.SetField("conditions", conds)); err != nil {
		return err
	}
	if rs := kptStatusOf(st); rs != nil {
		n, err := toNode(rs)
		if err != nil {
			return err
		}
		if err := status.PipeE(yaml.SetField("renderStatus", n)); err != nil {
			return err
		}
	} else if err := status.PipeE(yaml.Clear("renderStatus")); err != nil {
		return err
	}
	return rw.Write(nodes)
}

// toNode is v as a YAML node, its fields in their declared order.
func toNode(v any) (*yaml.RNode, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(b))
}

// annotationOn reports whether a Kptfile's annotation is "true" (any case).
func annotationOn(kptfile, name string) bool {
	n, err := yaml.Parse(kptfile)
	if err != nil {
		return false
	}
	return strings.EqualFold(n.GetAnnotations()[name], "true")
}

// WithoutKptStatus is a Kptfile without kpt v1.0's render status (its
// `Rendered` condition and `renderStatus`; other conditions kept, and
// `status` removed when nothing is left), and whether it had any: what
// pvctl publish puts in a catalog, as Porch v1.5.3 refuses the field and
// renders every clone itself.
func WithoutKptStatus(kptfile string) (string, bool, error) {
	nodes, err := (&kio.ByteReader{Reader: strings.NewReader(kptfile), PreserveSeqIndent: true}).Read()
	if err != nil || len(nodes) != 1 {
		return kptfile, false, err
	}
	status := nodes[0].Field("status")
	if status == nil {
		return kptfile, false, nil
	}
	changed := status.Value.Field("renderStatus") != nil
	if err := status.Value.PipeE(yaml.Clear("renderStatus")); err != nil {
		return kptfile, false, err
	}
	if conds := status.Value.Field("conditions"); conds != nil && conds.Value.YNode().Kind == yaml.SequenceNode {
		var keep []*yaml.Node
		for _, c := range conds.Value.Content() {
			if t := yaml.NewRNode(c).Field("type"); t != nil && yaml.GetValue(t.Value) == ConditionRendered {
				changed = true
				continue
			}
			keep = append(keep, c)
		}
		conds.Value.YNode().Content = keep
		if len(keep) == 0 {
			if err := status.Value.PipeE(yaml.Clear("conditions")); err != nil {
				return kptfile, false, err
			}
		}
	}
	if !changed {
		return kptfile, false, nil
	}
	if len(status.Value.Content()) == 0 {
		if err := nodes[0].PipeE(yaml.Clear("status")); err != nil {
			return kptfile, false, err
		}
	}
	var b strings.Builder
	if err := (&kio.ByteWriter{Writer: &b}).Write(nodes); err != nil {
		return kptfile, false, err
	}
	return b.String(), true, nil
}
