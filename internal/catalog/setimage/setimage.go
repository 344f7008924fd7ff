// Package setimage is set-image of the kpt function catalog at its main
// branch (`unstable`), written from its README and its e2e cases
// (`tests/set-image`, `examples/set-image-*` of
// github.com/kptdev/krm-functions-catalog) on the kpt function SDK.
//
// What it does, as the cases show:
//   - the config is a ConfigMap (data: name, newName, newTag, digest) or a
//     SetImage (image: {name, newName, newTag, digest},
//     additionalImageFields); `name` and one of the others are required;
//   - the containers of a Pod (`spec.containers`) and of the pod template
//     of a Deployment, StatefulSet, ReplicaSet, DaemonSet or PodTemplate
//     (`spec.template.spec.containers`) whose image is `name`, with any tag
//     or sha256 digest, get the new name, tag or digest; init containers,
//     Jobs and CronJobs are left alone (the main branch reads
//     `iniContainers` and lists no batch kinds; pvkit does the same, it
//     changes nothing);
//   - additionalImageFields: kustomize's image filter on those field specs
//     (as `path: spec/manifest/images[]/image`);
//   - results: "summary: updated a total of N image(s)" (info), N counting
//     each image changed; a config error is two error results, the message
//     and "function is terminated: " and it, exit 1.
//
// Deliberately different: when only newName is given, the main branch
// drops the ':' of the tag it keeps (nginx:1.20 becomes bitnami/nginx1.20,
// and a kept digest loses its '@'); pvkit keeps the tag or digest as it was
// (bitnami/nginx:1.20), as the released v0.1.x did. An image name that is
// not a valid regular expression matches nothing (the main branch panics).
package setimage

import (
	"context"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"

	"github.com/pvkit/pvkit/pkg/validate"

	"github.com/kptdev/krm-functions-sdk/go/fn"
	"github.com/pvkit/pvkit/internal/catalog/internal/sdkproc"
	"sigs.k8s.io/kustomize/api/filters/imagetag"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filtersutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Image is the image to set.
type Image struct {
	Name    string `json:"name,omitempty"`
	NewName string `json:"newName,omitempty"`
	NewTag  string `json:"newTag,omitempty"`
	Digest  string `json:"digest,omitempty"`
}

// SetImage is the function config (kind SetImage, fn.kpt.dev/v1alpha1, or a
// ConfigMap whose data the SDK puts in Data) and the function.
type SetImage struct {
	Image                 Image             `json:"image,omitempty"`
	Data                  map[string]string `json:"data,omitempty"`
	AdditionalImageFields types.FsSlice     `json:"additionalImageFields,omitempty"`

	count      int
	terminated string
}

// Run is the function as a process: a ResourceList on in, the result on out,
// the failure line on stderr; it returns the exit code.
func Run(in io.Reader, out, stderr io.Writer) int {
	s := &SetImage{}
	err := sdkproc.Process(fn.WithContext(context.Background(), s), in, out)
	switch {
	case s.terminated != "":
		fmt.Fprintf(stderr, "failed to evaluate function: function is terminated: %s", s.terminated)
		return 1
	case err != nil:
		fmt.Fprintf(stderr, "failed to evaluate function: %v", err)
		return 1
	}
	return 0
}

// Run implements fn.Runner.
func (s *SetImage) Run(_ *fn.Context, cfg *fn.KubeObject, items fn.KubeObjects, results *fn.Results) bool {
	if err := s.configure(); err != nil {
		return s.terminate(results, err.Error())
	}
	for _, o := range items {
		var podSpec *fn.SubObject
		switch o.GetKind() {
		case "Pod":
			podSpec = o.GetMap("spec")
		case "Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "PodTemplate":
			if spec := o.GetMap("spec"); spec != nil {
				if template := spec.GetMap("template"); template != nil {
					podSpec = template.GetMap("spec")
				}
			}
		}
		if podSpec == nil {
			continue
		}
		changed, err := s.setContainers(podSpec)
		if err != nil {
			results.ErrorE(err)
		}
		if len(changed) > 0 {
			plainImages(o, changed)
		}
	}
	if len(s.AdditionalImageFields) > 0 {
		s.setAdditionalFields(items, results)
	}
	*results = append(*results, &fn.Result{Message: fmt.Sprintf("summary: updated a total of %d image(s)", s.count), Severity: fn.Info})
	return true
}

// terminate is the catalog's way to stop on a config error: the error, then
// "function is terminated: " and it; the process exits 1 saying the second.
func (s *SetImage) terminate(results *fn.Results, msg string) bool {
	results.Errorf("%s", msg)
	results.Errorf("function is terminated: %s", msg)
	s.terminated = msg
	return false
}

// configure reads a ConfigMap's data into Image and checks the image: a
// data key the function does not know is an error, the first in sorted
// order named.
func (s *SetImage) configure() error {
	for _, k := range slices.Sorted(maps.Keys(s.Data)) {
		v := s.Data[k]
		switch k {
		case "name":
			s.Image.Name = v
		case "newName":
			s.Image.NewName = v
		case "newTag":
			s.Image.NewTag = v
		case "digest":
			s.Image.Digest = v
		default:
			return fmt.Errorf("ConfigMap has wrong field name %v", k)
		}
	}
	if s.Image.Name == "" {
		return fmt.Errorf("must specify `name`")
	}
	if s.Image.NewName == "" && s.Image.NewTag == "" && s.Image.Digest == "" {
		return fmt.Errorf("must specify one of `newName`, `newTag`, or `digest`")
	}
	return nil
}

// setContainers sets the image of each container of a pod spec whose
// image is the one named, and returns the indexes of the containers it
// changed.
func (s *SetImage) setContainers(podSpec *fn.SubObject) ([]int, error) {
	var changed []int
	for i, c := range podSpec.GetSlice("containers") {
		old, _, err := c.NestedString("image")
		if err != nil {
			return changed, err
		}
		if !matches(old, s.Image.Name) {
			continue
		}
		updated := s.Image.apply(old)
		if updated == old {
			continue
		}
		if err := c.SetNestedString(updated, "image"); err != nil {
			return changed, err
		}
		changed = append(changed, i)
		s.count++
	}
	return changed, nil
}

// plainImages writes the images set in the containers at the indexes
// changed unquoted (plain style, quoted only where YAML needs it), as the
// catalog's set-image v0.1.x writes them: its SDK replaced the value node,
// where the maintained SDK keeps the old value's quoting.
func plainImages(o *fn.KubeObject, changed []int) {
	rn := o.MoveToResourceNode()
	path := []string{"spec", "template", "spec", "containers"}
	if rn.GetKind() == "Pod" {
		path = []string{"spec", "containers"}
	}
	if cs, err := rn.Pipe(yaml.Lookup(path...)); err == nil && cs != nil && cs.YNode().Kind == yaml.SequenceNode {
		for _, i := range changed {
			if i >= len(cs.YNode().Content) {
				continue
			}
			if img, err := yaml.NewRNode(cs.YNode().Content[i]).Pipe(yaml.Lookup("image")); err == nil && img != nil {
				img.YNode().Style = 0
			}
		}
	}
	*o = *fn.MoveToKubeObject(rn)
}

// matches says whether image is name with at most a tag and a sha256
// digest after it; name is read as a regular expression, as kustomize's
// image matching reads it.
func matches(image, name string) bool {
	re, err := regexp.Compile("^" + name + `(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$`)
	return err == nil && re.MatchString(image)
}

// apply is the image with the new name, tag or digest: a new tag replaces
// the tag and the digest, a new digest replaces both, and with neither the
// old tag and digest stay as they were.
func (i Image) apply(image string) string {
	name, suffix := splitImage(image)
	if i.NewName != "" {
		name = i.NewName
	}
	switch {
	case i.Digest != "":
		suffix = "@" + i.Digest
	case i.NewTag != "":
		suffix = ":" + i.NewTag
	}
	return name + suffix
}

// splitImage is an image reference's name and its ":tag", "@digest" or
// ":tag@digest" (validate.ParseImage).
func splitImage(image string) (name, suffix string) {
	img := validate.ParseImage(image)
	return img.Name, img.Suffix()
}

// setAdditionalFields runs kustomize's image filter with the config's
// additional field specs over every object (through JSON, as the catalog
// does).
func (s *SetImage) setAdditionalFields(items fn.KubeObjects, results *fn.Results) {
	img := types.Image{Name: s.Image.Name, NewName: s.Image.NewName, NewTag: s.Image.NewTag, Digest: s.Image.Digest}
	for i, o := range items {
		node, err := yaml.Parse(o.String())
		if err != nil {
			results.ErrorE(err)
			continue
		}
		f := imagetag.Filter{ImageTag: img, FsSlice: s.AdditionalImageFields}
		f.WithMutationTracker(func(_, _, _ string, _ *yaml.RNode) { s.count++ })
		if err := filtersutil.ApplyToJSON(f, node); err != nil {
			results.ErrorE(err)
			continue
		}
		text, err := node.String()
		if err != nil {
			results.ErrorE(err)
			continue
		}
		updated, err := fn.ParseKubeObject([]byte(text))
		if err != nil {
			results.ErrorE(err)
			continue
		}
		items[i] = updated
	}
}
