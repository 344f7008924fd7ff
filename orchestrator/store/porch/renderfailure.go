package porch

import (
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// renderFailureText is how Porch's error for a failed render of an update
// begins its explanation (pkg/task's renderError, v1.5.3); a create
// (clone, upgrade, edit) that fails its render answers with the renderer's
// own error, unwrapped, which begins with kpt's op (renderCreateText:
// "Internal error occurred: fn.render: pkg /: ..."). Read as Porch's
// repository failing, the package's own failure was retried without end
// and judged only at a rollout's progress deadline.
const (
	renderFailureText = "Error occurred rendering package in kpt function pipeline"
	renderCreateText  = "Internal error occurred: fn.render: "
)

func isRenderFailure(err error) bool {
	return apierrors.IsInternalError(err) && (strings.Contains(err.Error(), renderFailureText) || strings.HasPrefix(err.Error(), renderCreateText))
}
