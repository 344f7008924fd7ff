package cli

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pvkit/pvkit/orchestrator/fnruntime"
	"github.com/pvkit/pvkit/orchestrator/local"
	"github.com/spf13/cobra"
)

// renderFlags are how pvctl run and plan render the drafts they write.
type renderFlags struct {
	noRender       bool
	allowExec      bool
	allowNetwork   bool
	renderTimeout  time.Duration
	pullPolicy     string
	functionRunner string
	functionConfig string
}

// FunctionConfigEnv names the function runner config pvctl maps images to
// executables with, when --function-config is not given.
const FunctionConfigEnv = "PVCTL_FUNCTION_CONFIG"

func (r *renderFlags) add(c *cobra.Command) {
	f := c.Flags()
	f.BoolVar(&r.noRender, "no-render", false, "do not render the drafts the run writes (Porch renders every one; a package whose pipeline fails is RenderFailed)")
	f.BoolVar(&r.allowExec, "allow-exec", false, "let pipelines run `exec:` functions (kpt fn render --allow-exec)")
	f.BoolVar(&r.allowNetwork, "allow-network", false, "run functions as executables with the host's network (by default each runs in a network namespace of its own, as kpt runs images with --network none; where pvctl cannot make one it refuses to run them)")
	f.DurationVar(&r.renderTimeout, "render-timeout", local.DefaultRenderTimeout, "the deadline of one draft's render, all its functions together")
	f.StringVar(&r.pullPolicy, "image-pull-policy", "IfNotPresent", "Always, IfNotPresent or Never: when docker or podman pulls a function image")
	f.StringVar(&r.functionRunner, "function-runner", "", "ADDR of a Porch function runner to run the images pvctl cannot run itself")
	f.StringVar(&r.functionConfig, "function-config", "", "a Porch function runner config mapping image names to executables in its directory "+
		"(default: $"+FunctionConfigEnv+", else catalog/config.yaml next to pvctl, which make catalog-functions writes)")
}

// options builds the run's render options: nil with --no-render.
func (r *renderFlags) options() (*local.Render, error) {
	if r.noRender {
		return nil, nil
	}
	policy := map[string]string{"always": "Always", "ifnotpresent": "IfNotPresent", "never": "Never"}[strings.ToLower(r.pullPolicy)]
	if policy == "" {
		return nil, usageErr("--image-pull-policy must be Always, IfNotPresent or Never, not %q", r.pullPolicy)
	}
	rt := &fnruntime.Runtime{FunctionRunner: r.functionRunner, PullPolicy: policy, AllowExec: r.allowExec, AllowNetwork: r.allowNetwork}
	config := r.functionConfig
	if config == "" {
		config = os.Getenv(FunctionConfigEnv)
	}
	if config == "" {
		if exe, err := os.Executable(); err == nil {
			if p := filepath.Join(filepath.Dir(exe), "catalog", "config.yaml"); fileExists(p) {
				config = p
			}
		}
	}
	if config != "" {
		m, err := fnruntime.LoadExecutables(config, "")
		if err != nil {
			return nil, usageErr("--function-config: %v", err)
		}
		rt.Executables = m
	}
	rt.FindContainer = r.functionRunner == "" // on first need
	if r.renderTimeout <= 0 {
		return nil, usageErr("--render-timeout must be positive, found %s (--no-render renders nothing)", r.renderTimeout)
	}
	return &local.Render{Runtime: rt, AllowExec: r.allowExec, Timeout: r.renderTimeout}, nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
