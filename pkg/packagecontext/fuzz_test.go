package packagecontext

import (
	"testing"

	"github.com/pvkit/pvkit/internal/fntest"
)

// FuzzPackageContext: any package file and any functionConfig, through the
// binary's code path. Seeds: the golden cases and a ConfigMap config.
func FuzzPackageContext(f *testing.F) {
	fntest.FuzzFunction(f, "package-context", Process,
		[2]string{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kptfile.kpt.dev\n  annotations:\n    config.kubernetes.io/path: package-context.yaml\ndata:\n  name: app\n",
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\ndata:\n  env: prod\n"})
}
