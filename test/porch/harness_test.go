package porch

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	porchapi "github.com/nephio-project/porch/api/porch/v1alpha1"
	porchconfig "github.com/nephio-project/porch/api/porchconfig/v1alpha1"
	"github.com/pvkit/pvkit/internal/fntest"
	"github.com/pvkit/pvkit/orchestrator/api"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The stack `make e2e-porch` brought up (test/porch/stack.sh).
var (
	stackDir   = os.Getenv("PVKIT_PORCH_DIR")
	adminKC    = filepath.Join(stackDir, "admin.kubeconfig")
	repoRoot   = fntest.RepoRoot()
	setupOnce  sync.Once
	setupErr   error
	controller *exec.Cmd
)

func TestMain(m *testing.M) {
	if stackDir == "" {
		// Each test skips itself in newEnv, so go test reports SKIP, not ok.
		os.Exit(m.Run())
	}
	code := m.Run()
	stopController()
	stopPorchControllers()
	os.Exit(code)
}

// env is one scenario: its own namespace on the shared stack.
type env struct {
	t      *testing.T
	c      client.Client
	ns     string
	nudges int // refs nudge made
	// handledN counts handled's reconcile requests.
	handledN int
	// failure is what eventually last gave up on: dump says it again after
	// its long listings, where the end of a CI log shows it.
	failure string
}

// newEnv installs pvkit once (CRDs, the role of config/default, the
// controller as a process with its ServiceAccount's token) and makes a
// fresh namespace (the stack has no namespace controller: namespaces are
// never removed, so each scenario gets a new one).
func newEnv(t *testing.T, name string) *env {
	t.Helper()
	if stackDir == "" {
		t.Skip("no real Porch (PVKIT_PORCH_DIR is unset); `make e2e-porch` brings one up and runs these tests")
	}
	setupOnce.Do(func() { setupErr = install() })
	if setupErr != nil {
		t.Fatalf("installing pvkit: %v", setupErr)
	}
	c, err := newClient(adminKC)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, c: c, ns: fmt.Sprintf("%s-%d", name, time.Now().UnixNano()%1e6)}
	if err := c.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			e.dump()
			return
		}
		e.unload()
	})
	return e
}

func newClient(kubeconfig string) (client.Client, error) {
	return newWatchClient(kubeconfig)
}

// newWatchClient is a client that can also watch.
func newWatchClient(kubeconfig string) (client.WithWatch, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	scheme, err := api.Scheme()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: scheme})
}

func kubectl(stdin string, args ...string) (string, error) {
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", adminKC}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), nil
}

// install applies what config/default installs but the Deployment (the
// controller runs here as a process), then starts bin/pvkit-controller with
// the ServiceAccount's credentials: the role is proven sufficient.
func install() error {
	for _, args := range [][]string{
		{"apply", "-k", filepath.Join(repoRoot, "config/crd")},
		{"apply", "-f", filepath.Join(repoRoot, "config/manager/namespace.yaml")},
		{"apply", "-k", filepath.Join(repoRoot, "config/rbac")},
		{"apply", "-f", filepath.Join(repoRoot, "test/porch/testdata/team-crd.yaml")},
		{"apply", "-f", filepath.Join(repoRoot, "config/rbac/approve-by-policy.yaml")},
	} {
		if _, err := kubectl("", args...); err != nil {
			return err
		}
	}
	if err := serviceAccountKubeconfig("pvkit-controller", filepath.Join(stackDir, "pvkit-controller.kubeconfig")); err != nil {
		return err
	}
	return startController()
}

// serviceAccountKubeconfig writes a kubeconfig with a token of the
// ServiceAccount pvkit-system/name: what a pod of it would hold.
func serviceAccountKubeconfig(name, path string) error {
	token, err := kubectl("", "create", "token", name, "-n", "pvkit-system", "--duration", "6h")
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: %q}
contexts:
- name: e2e
  context: {cluster: e2e, user: pvkit-controller}
current-context: e2e
users:
- name: pvkit-controller
  user: {token: %q}
`, filepath.Join(stackDir, "pki/ca.crt"), strings.TrimSpace(token))), 0o600)
}

// controllerExtraArgs are more flags for the controller. The suite's
// controller approves by policy (config/rbac/approve-by-policy.yaml's
// rights): the scenarios that need it run beside the others, which name no
// approval policy and so are left alone by it. It observes what is
// published every 20 s (rule observe-cadence; the default is 5 minutes):
// TestContentDriftOnPorch sees a commit without being woken.
var controllerExtraArgs = []string{"--approve-by-policy", "--observe-interval=20s"}

// metricsAddr is where the running controller serves /metrics.
var metricsAddr string

// freeAddrs are n distinct loopback addresses no one listens on now: a
// fixed port may be taken by anything else on the machine (the controller
// then never got ready, and scenarios failed after 90 s). All n are held
// until all are picked: picked one at a time, the kernel may hand out the
// same port twice (CI at d6cee01: the restarted controller's metrics and
// probes both got 127.0.0.1:39971, and it exited on "address already in
// use").
func freeAddrs(n int) ([]string, error) {
	var out []string
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		out = append(out, l.Addr().String())
	}
	return out, nil
}

// startController starts bin/pvkit-controller with the ServiceAccount's
// kubeconfig and waits for its readiness probe; its log is appended to
// pvkit-controller.log.
func startController() error {
	logf, err := os.OpenFile(filepath.Join(stackDir, "pvkit-controller.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	addrs, err := freeAddrs(2)
	if err != nil {
		return err
	}
	health := addrs[0]
	metricsAddr = addrs[1]
	args := append([]string{"--kubeconfig", filepath.Join(stackDir, "pvkit-controller.kubeconfig"),
		"--metrics-bind-address", metricsAddr, "--health-probe-bind-address", health,
		"--workers", workers(), "--zap-encoder", "console",
		// The scenarios inject the examples' Team kind: allowed as an operator
		// allows a kind (testdata/team-crd.yaml has the matching role).
		"--readable-kinds", "ConfigMap,Team.example.com,Kustomization.kustomize.toolkit.fluxcd.io",
		// The stack's edge API server listens on loopback, which a
		// kubeconfig Secret may name only when the operator lists it.
		"--health-cluster-servers", "127.0.0.0/8"}, controllerExtraArgs...)
	if controller, err = runController("pvkit's controller", args, logf, health); err != nil {
		return err
	}
	_ = os.WriteFile(filepath.Join(stackDir, "pvkit-controller.pid"), []byte(fmt.Sprint(controller.Process.Pid)), 0o644)
	return nil
}

// runController starts bin/pvkit-controller with args outside any pod (no
// in-cluster credentials), its output appended to logf, and waits for its
// readiness probe at health.
func runController(what string, args []string, logf *os.File, health string) (*exec.Cmd, error) {
	cmd := exec.Command(filepath.Join(repoRoot, "bin/pvkit-controller"), args...)
	cmd.Env = append(os.Environ(), "KUBERNETES_SERVICE_HOST=", "KUBERNETES_SERVICE_PORT=")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, waitReady(what, "http://"+health+"/readyz", logf.Name())
}

// workers is the controller's --workers: PVKIT_PORCH_WORKERS, else 8 (the
// Deployment's).
func workers() string {
	if w := os.Getenv("PVKIT_PORCH_WORKERS"); w != "" {
		return w
	}
	return "8"
}

// waitReady polls a readiness probe for 30 s; on failure the error has the
// process's log.
func waitReady(what, url, logPath string) error {
	for i := 0; i < 300; i++ {
		if r, err := http.Get(url); err == nil {
			r.Body.Close()
			if r.StatusCode == 200 {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(logPath)
	return fmt.Errorf("%s did not become ready in 30 s; its log:\n%s", what, b)
}

// stopController stops pvkit's controller (SIGTERM, as a rollout does).
func stopController() { stopProcess(&controller) }

// stopProcess stops a process the tests started, with SIGTERM as a rollout
// does, waits for it and forgets it.
func stopProcess(p **exec.Cmd) {
	if *p == nil || (*p).Process == nil {
		return
	}
	_ = (*p).Process.Signal(os.Interrupt)
	_, _ = (*p).Process.Wait()
	*p = nil
}

// dump prints what a failing scenario needs: the controller's log and the
// namespace's PackageRevisions and variants.
func (e *env) dump() {
	b, _ := os.ReadFile(filepath.Join(stackDir, "pvkit-controller.log"))
	lines := strings.Split(string(b), "\n")
	if len(lines) > 200 {
		lines = lines[len(lines)-200:]
	}
	e.t.Logf("controller log (last %d lines):\n%s", len(lines), strings.Join(lines, "\n"))
	out, err := kubectl("", "get", "packagerevisions,packagevariants,packagevariantsets", "-n", e.ns, "-o", "wide")
	e.t.Logf("in %s:\n%s%v", e.ns, out, err)
	out, _ = kubectl("", "get", "packagevariants", "-n", e.ns, "-o", "yaml")
	e.t.Logf("variants:\n%s", out)
	e.t.Log(porchStuck(e.t.Name()))
	if e.failure != "" {
		e.t.Logf("%s failed waiting for %s", e.t.Name(), e.failure)
	}
}

// porchStuck is what porch-server is waiting on, for a failure that may be
// Porch's (a CI run once saw every packagerevisions request time out after
// a repository poll that never finished): its goroutines (pprof on its
// port; standalone debug mode serves it without credentials), saved whole
// next to the stack's logs, summarised here as the goroutines blocked for a
// minute or more in Porch or go-git; and the git processes still running
// (go-git runs git-upload-pack and git-receive-pack for file:// URLs).
func porchStuck(test string) string {
	var b strings.Builder
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get("https://127.0.0.1:9443/debug/pprof/goroutine?debug=2")
	if err != nil {
		return fmt.Sprintf("porch-server's goroutines: %v", err)
	}
	defer resp.Body.Close()
	dump, _ := io.ReadAll(resp.Body)
	file := filepath.Join(stackDir, "porch-goroutines-"+strings.NewReplacer("/", "_", " ", "_").Replace(test)+".txt")
	_ = os.WriteFile(file, dump, 0o644)
	fmt.Fprintf(&b, "porch-server's goroutines: %s; blocked a minute or more in Porch or go-git:\n", file)
	for _, g := range strings.Split(string(dump), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		if !longBlocked.MatchString(head) || !strings.Contains(g, "nephio-project/porch") && !strings.Contains(g, "go-git") {
			continue
		}
		lines := strings.Split(g, "\n")
		if len(lines) > 25 {
			lines = append(lines[:25], "\t...")
		}
		b.WriteString(strings.Join(lines, "\n") + "\n\n")
	}
	if out, err := exec.Command("ps", "-eo", "pid,etimes,args").Output(); err == nil {
		b.WriteString("git processes still running (pid, seconds, command):\n")
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "git-upload-pack") || strings.Contains(l, "git-receive-pack") || strings.Contains(l, "git upload-pack") || strings.Contains(l, "git receive-pack") {
				b.WriteString(l + "\n")
			}
		}
	}
	return b.String()
}

// longBlocked matches the header of a goroutine that has waited a minute or
// more on a lock, a channel send, a process or a pipe ("goroutine 7
// [sync.Mutex.Lock, 3 minutes]:"), not the long-lived loops' receives and
// selects.
var longBlocked = regexp.MustCompile(`^goroutine \d+ \[(sync\.(RW)?Mutex\.R?Lock|semacquire|chan send|syscall|IO wait)[^\]]*, \d+ minutes`)

// eventually polls cond every 250 ms until it holds or timeout passes.
func (e *env) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, msg := cond()
		if ok {
			// The time each wait took, in the log: where e2e-porch's
			// time goes (hack/testtimes.sh sums tests, this says why).
			e.t.Logf("waited %.1f s: %s", time.Since(start).Seconds(), what)
			return
		}
		last = msg
		time.Sleep(250 * time.Millisecond)
	}
	e.failure = fmt.Sprintf("%s: not within %s; last: %s", what, timeout, last)
	e.t.Fatal(e.failure)
}

// nudge makes Porch read a repository again: a new ref (outside the
// branches and tags Porch reads packages from) changes the repository's
// version, so Porch's next poll lists it afresh. Porch v1.5.3 can keep a
// listing that lacks a revision after a burst of writes to one repository,
// under a version that already counts them (rule one-write-per-repository),
// and lists it again only when the repository changes: a check of what
// pvkit wrote that reads Porch's listing nudges it before it gives up.
func (e *env) nudge(repo string) {
	e.t.Helper()
	dir := filepath.Join(stackDir, "git", e.ns, repo+".git")
	e.nudges++
	script := fmt.Sprintf(`set -e; c=$(git commit-tree -m nudge $(git mktree </dev/null)); git update-ref refs/heads/pvkit-e2e-nudge/%d "$c"`, e.nudges)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("nudging %s: %v\n%s", repo, err, out)
	}
	e.t.Logf("nudged Porch to list %s again (%d)", repo, e.nudges)
}

// eventuallyListed is eventually for a condition read from Porch's listing
// of a repository that a burst of writes can leave stale: after 20 s unmet,
// and every 10 s after, Porch is nudged to list the repository again.
func (e *env) eventuallyListed(repo string, timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	start, nudged := time.Now(), time.Now()
	e.eventually(timeout, what, func() (bool, string) {
		if time.Since(start) > 20*time.Second && time.Since(nudged) > 10*time.Second {
			e.nudge(repo)
			nudged = time.Now()
		}
		return cond()
	})
}

// git runs git in dir.
func (e *env) git(dir string, args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=e2e", "GIT_AUTHOR_EMAIL=e2e@example.com", "GIT_COMMITTER_NAME=e2e", "GIT_COMMITTER_EMAIL=e2e@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// bareRepo makes an empty bare git repository and returns its file URL.
func (e *env) bareRepo(name string) string {
	dir := filepath.Join(stackDir, "git", e.ns, name+".git")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	e.git(dir, "init", "-q", "--bare", "-b", "main")
	return "file://" + dir
}

// publishUpstream pushes package pkg (the files of dir) to main of the
// repository at url with tag <pkg>/<rev>, as a published Porch revision.
func (e *env) publishUpstream(url, pkg, rev string, files map[string]string) {
	e.t.Helper()
	work := e.t.TempDir()
	e.git(work, "clone", "-q", url, ".")
	if err := os.RemoveAll(filepath.Join(work, pkg)); err != nil {
		e.t.Fatal(err)
	}
	for name, text := range files {
		p := filepath.Join(work, pkg, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	e.git(work, "add", "-A")
	e.git(work, "commit", "-q", "-m", pkg+" "+rev)
	e.git(work, "tag", pkg+"/"+rev)
	e.git(work, "push", "-q", "origin", "HEAD:main", pkg+"/"+rev)
}

// repository registers a git repository with Porch.
func (e *env) repository(name, url string, deployment bool, labels map[string]string) {
	e.t.Helper()
	r := &porchconfig.Repository{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns, Labels: labels},
		Spec: porchconfig.RepositorySpec{Type: porchconfig.RepositoryTypeGit, Deployment: deployment,
			Git: &porchconfig.GitRepository{Repo: url, Branch: "main", Directory: "/", CreateBranch: true}}}
	if err := e.c.Create(context.Background(), r); err != nil {
		e.t.Fatal(err)
	}
}

// revisions lists the namespace's package revisions of repo/pkg.
func (e *env) revisions(repo, pkg string) []porchapi.PackageRevision {
	e.t.Helper()
	var l porchapi.PackageRevisionList
	if err := e.c.List(context.Background(), &l, client.InNamespace(e.ns)); err != nil {
		e.t.Fatal(err)
	}
	var out []porchapi.PackageRevision
	for _, r := range l.Items {
		if r.Spec.RepositoryName == repo && r.Spec.PackageName == pkg {
			out = append(out, r)
		}
	}
	return out
}

// resources reads a revision's files. Porch v1.5.3 answers a read with an
// Internal error while its cache of the repository races a refresh (seen in
// CI at 3edf3b1: "error cloning git repository ...deploy.git, fetch of
// remote repository failed: error creating main branch \"main\": already
// up-to-date", the next read fine): read again, as e.retry does for writes.
func (e *env) resources(name string) map[string]string {
	e.t.Helper()
	var prr porchapi.PackageRevisionResources
	var err error
	for i := 0; i < 20; i++ {
		if err = e.c.Get(context.Background(), client.ObjectKey{Namespace: e.ns, Name: name}, &prr); err == nil {
			return prr.Spec.Resources
		}
		if !apierrors.IsInternalError(err) && !strings.Contains(err.Error(), "error cloning git repository") {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	e.t.Fatalf("reading the resources of %s: %v", name, err)
	return nil
}

// apply creates the objects of a YAML stream in the namespace.
func (e *env) apply(text string) {
	e.t.Helper()
	if _, err := kubectl(text, "apply", "-n", e.ns, "-f", "-"); err != nil {
		e.t.Fatal(err)
	}
}

// retry runs f until it succeeds or 20 tries have failed on a conflict:
// the controller may write a revision between a test's read and its write.
// Porch v1.5.3 wraps some conflicts in an InternalError, so the message is
// what tells.
func (e *env) retry(what string, f func() error) {
	e.t.Helper()
	var err error
	for i := 0; i < 20; i++ {
		if err = f(); err == nil {
			return
		}
		// A conflict, or an Internal error of Porch v1.5.3 racing another
		// write to the repository in go-git ("ref file is empty", "remote
		// not found"; seen proposing and approving while the controller
		// wrote a sibling draft), or Porch too busy to answer through the
		// aggregation layer (503, "the server is currently unable to handle
		// the request"; seen with the scenarios running at once): what a
		// person retries.
		if !apierrors.IsConflict(err) && !strings.Contains(err.Error(), "the object has been modified") &&
			!apierrors.IsInternalError(err) && !apierrors.IsServiceUnavailable(err) && !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) {
			break
		}
		time.Sleep(time.Duration(250*(i+1)) * time.Millisecond)
	}
	e.t.Fatalf("%s: %v", what, err)
}

// approve proposes and approves a draft through Porch.
func (e *env) approve(name string) {
	e.t.Helper()
	e.propose(name)
	e.approval(name, porchapi.PackageRevisionLifecyclePublished)
}

// propose proposes a draft for approval, as porchctl rpkg propose does.
func (e *env) propose(name string) {
	e.t.Helper()
	ctx := context.Background()
	var pr porchapi.PackageRevision
	e.retry("proposing "+name, func() error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &pr); err != nil {
			return err
		}
		if pr.Spec.Lifecycle == porchapi.PackageRevisionLifecycleProposed {
			return nil
		}
		pr.Spec.Lifecycle = porchapi.PackageRevisionLifecycleProposed
		return e.c.Update(ctx, &pr)
	})
}

// reject sends a proposed draft back to Draft, as porchctl rpkg reject
// does (the approval subresource).
func (e *env) reject(name string) {
	e.t.Helper()
	e.approval(name, porchapi.PackageRevisionLifecycleDraft)
}

// approval writes a proposed revision's lifecycle through Porch's approval
// subresource: Published approves it, Draft rejects it.
func (e *env) approval(name string, lc porchapi.PackageRevisionLifecycle) {
	e.t.Helper()
	ctx := context.Background()
	var pr porchapi.PackageRevision
	e.retry(fmt.Sprintf("%s: %s by the approval subresource", name, lc), func() error {
		if err := e.c.Get(ctx, client.ObjectKey{Namespace: e.ns, Name: name}, &pr); err != nil {
			return err
		}
		pr.Spec.Lifecycle = lc
		return e.c.SubResource("approval").Update(ctx, &pr)
	})
}

// releaseFleet publishes the blueprint's v1 in blueprints, applies the cluster's
// objects and makes n deployment repositories prefix-000 and on, labelled
// with labels (and ring: canary on the first when canary): the setup of a
// release scenario. It returns the blueprints URL, the blueprint's files
// and the repositories' names.
func (e *env) releaseFleet(prefix string, n int, labels map[string]string, canary bool) (string, map[string]string, []string) {
	e.t.Helper()
	files := blueprint(e.t)
	url := e.bareRepo("blueprints")
	e.publishUpstream(url, "app", "v1", files)
	e.repository("blueprints", url, false, nil)
	e.apply(cluster)
	repos := make([]string, n)
	for i := range repos {
		l := map[string]string{}
		for k, v := range labels {
			l[k] = v
		}
		if canary && i == 0 {
			l["ring"] = "canary"
		}
		repos[i] = fmt.Sprintf("%s-%03d", prefix, i)
		e.repository(repos[i], e.bareRepo(repos[i]), true, l)
	}
	return url, files, repos
}
