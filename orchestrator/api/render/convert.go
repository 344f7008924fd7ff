package render

import (
	"github.com/kptdev/krm-functions-sdk/go/fn"
	pkgrender "github.com/pvkit/pvkit/pkg/render"
)

// FromStatus is pkg/render's status as Porch's API shows a render: each
// function run's image or exec path, exit code, stderr and results (none
// for a step that could not run), the render's exit code and error.
func FromStatus(st *pkgrender.Status) RenderStatus {
	out := RenderStatus{Err: st.Err}
	out.Result.APIVersion, out.Result.Kind = "kpt.dev/v1", "FunctionResultList"
	out.Result.ExitCode = st.ExitCode()
	for _, r := range st.Runs {
		if r.ExecutionError != "" { // Porch's list has an item for a function that ran
			continue
		}
		item := &ResultListItem{Image: r.Image, ExecPath: r.Exec, Stderr: r.Stderr, ExitCode: r.ExitCode}
		for _, res := range r.Results {
			item.Results = append(item.Results, fromResult(res))
		}
		out.Result.Items = append(out.Result.Items, item)
	}
	return out
}

func fromResult(r *fn.Result) ResultItem {
	out := ResultItem{Message: r.Message, Severity: string(r.Severity), Tags: r.Tags}
	if ref := r.ResourceRef; ref != nil {
		out.ResourceRef = &ResourceIdentifier{Name: ref.Name, Namespace: ref.Namespace}
		out.ResourceRef.APIVersion, out.ResourceRef.Kind = ref.APIVersion, ref.Kind
	}
	if f := r.Field; f != nil {
		out.Field = &ResultField{Path: f.Path}
		if f.CurrentValue != nil {
			out.Field.CurrentValue = stringOf(f.CurrentValue)
		}
		if f.ProposedValue != nil {
			out.Field.ProposedValue = stringOf(f.ProposedValue)
		}
	}
	if f := r.File; f != nil {
		out.File = &ResultFile{Path: f.Path, Index: f.Index}
	}
	return out
}

func stringOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}
