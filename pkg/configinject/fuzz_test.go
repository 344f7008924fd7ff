package configinject

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// FuzzConfigInject: any package file and any functionConfig, through the
// binary's code path (fntest.FuzzFunction). Seeds: the golden cases, the
// alias bomb and a minimal point.
func FuzzConfigInject(f *testing.F) {
	fntest.FuzzFunction(f, "config-inject", Process,
		[2]string{"kind: ConfigMap\nmetadata:\n  annotations:\n    kpt.dev/config-injection: required\n", "kind: ConfigInjection\napiVersion: fn.pvkit.dev/v1alpha1\n"},
		[2]string{"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n", "kind: ConfigInjection\napiVersion: fn.pvkit.dev/v1alpha1\n"})
}
