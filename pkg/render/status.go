package render

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kptdev/krm-functions-sdk/go/fn"
)

// Status is the outcome of a render: each function step and, for a failed
// render, the error; Porch's shape (orchestrator/api/render) and kpt
// v1.0's (KptStatus) are both read from it.
type Status struct {
	// Runs are the function steps, in order; a failed render ends with the
	// step that failed: one that ran and failed, or one that could not run
	// (ExecutionError). None when the render failed before any step.
	Runs []Run
	// Err is the render's error ("" when it succeeded).
	Err string
}

// ExitCode is 1 for a failed render, else 0 (Porch's ResultList.ExitCode).
func (s *Status) ExitCode() int {
	if s.Err != "" {
		return 1
	}
	return 0
}

// Executed is the number of functions that ran (a skipped step did not,
// nor one that could not run).
func (s *Status) Executed() int {
	n := 0
	for _, r := range s.Runs {
		if !r.Skipped && r.ExecutionError == "" {
			n++
		}
	}
	return n
}

// Run is one function run: what ran, its exit code, its stderr and the
// results it reported.
type Run struct {
	Image    string
	Exec     string
	ExitCode int
	Stderr   string
	Results  fn.Results
	// When is the step's condition, if it has one; Skipped says it was
	// false and the function did not run (kpt's renderStatus step fields).
	When    string
	Skipped bool
	// StepName is the step's `name` in the Kptfile, if it has one.
	StepName string
	// Validator says the step is one of the pipeline's validators.
	Validator bool
	// ExecutionError is why the function did not run, or why what it
	// returned was refused (exec not allowed, no runtime, no config, its
	// output outside the package): kpt's executionError, with ExitCode 1.
	// Porch's result list has no item for such a step.
	ExecutionError string
}

// Name is the image, or the exec path.
func (r Run) Name() string {
	if r.Image != "" {
		return r.Image
	}
	return r.Exec
}

// ExitError is what a Runtime's runner returns for a function that ran and
// failed: its exit code and its standard error, which the render status
// keeps.
type ExitError struct {
	Code   int
	Stderr string
	// Message, when set, is the error's text in place of the stderr (which
	// the status still keeps): a runtime's own failure, said in one line.
	Message string
}

func (e *ExitError) Error() string {
	if e.Message != "" {
		return e.Message
	}
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return fmt.Sprintf("exit code %d: %s", e.Code, msg)
}

// exitOf is the exit code and stderr of a runner's error.
func exitOf(err error) (int, string) {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code, ee.Stderr
	}
	return 1, ""
}
