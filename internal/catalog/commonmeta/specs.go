package commonmeta

import (
	"sigs.k8s.io/kustomize/api/types"
	sigsyaml "sigs.k8s.io/yaml"
)

// The places kustomize's commonLabels and commonAnnotations reach by
// default (kustomize's documented field specs, in the order kustomize
// v0.10 lists them): metadata, selectors and pod, job and claim templates of
// the workload kinds. A path that crosses a list (`volumeClaimTemplates[]`,
// `ingress/from`) reaches into each entry.
const commonLabels = `
- {path: metadata/labels, create: true}
- {path: spec/selector, create: true, version: v1, kind: Service}
- {path: spec/selector, create: true, version: v1, kind: ReplicationController}
- {path: spec/template/metadata/labels, create: true, version: v1, kind: ReplicationController}
- {path: spec/selector/matchLabels, create: true, kind: Deployment}
- {path: spec/template/metadata/labels, create: true, kind: Deployment}
- {path: spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels, group: apps, kind: Deployment}
- {path: spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels, group: apps, kind: Deployment}
- {path: spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels, group: apps, kind: Deployment}
- {path: spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels, group: apps, kind: Deployment}
- {path: spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels, group: apps, kind: Deployment}
- {path: spec/selector/matchLabels, create: true, kind: ReplicaSet}
- {path: spec/template/metadata/labels, create: true, kind: ReplicaSet}
- {path: spec/selector/matchLabels, create: true, kind: DaemonSet}
- {path: spec/template/metadata/labels, create: true, kind: DaemonSet}
- {path: spec/selector/matchLabels, create: true, group: apps, kind: StatefulSet}
- {path: spec/template/metadata/labels, create: true, group: apps, kind: StatefulSet}
- {path: spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels, group: apps, kind: StatefulSet}
- {path: spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels, group: apps, kind: StatefulSet}
- {path: spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels, group: apps, kind: StatefulSet}
- {path: spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels, group: apps, kind: StatefulSet}
- {path: spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels, group: apps, kind: StatefulSet}
- {path: "spec/volumeClaimTemplates[]/metadata/labels", create: true, group: apps, kind: StatefulSet}
- {path: spec/selector/matchLabels, group: batch, kind: Job}
- {path: spec/template/metadata/labels, create: true, group: batch, kind: Job}
- {path: spec/jobTemplate/spec/selector/matchLabels, group: batch, kind: CronJob}
- {path: spec/jobTemplate/metadata/labels, create: true, group: batch, kind: CronJob}
- {path: spec/jobTemplate/spec/template/metadata/labels, create: true, group: batch, kind: CronJob}
- {path: spec/selector/matchLabels, group: policy, kind: PodDisruptionBudget}
- {path: spec/podSelector/matchLabels, group: networking.k8s.io, kind: NetworkPolicy}
- {path: spec/ingress/from/podSelector/matchLabels, group: networking.k8s.io, kind: NetworkPolicy}
- {path: spec/egress/to/podSelector/matchLabels, group: networking.k8s.io, kind: NetworkPolicy}
`

const commonAnnotations = `
- {path: metadata/annotations, create: true}
- {path: spec/template/metadata/annotations, create: true, version: v1, kind: ReplicationController}
- {path: spec/template/metadata/annotations, create: true, kind: Deployment}
- {path: spec/template/metadata/annotations, create: true, kind: ReplicaSet}
- {path: spec/template/metadata/annotations, create: true, kind: DaemonSet}
- {path: spec/template/metadata/annotations, create: true, kind: StatefulSet}
- {path: spec/template/metadata/annotations, create: true, group: batch, kind: Job}
- {path: spec/jobTemplate/metadata/annotations, create: true, group: batch, kind: CronJob}
- {path: spec/jobTemplate/spec/template/metadata/annotations, create: true, group: batch, kind: CronJob}
`

func mustSpecs(s string) types.FsSlice {
	var out types.FsSlice
	if err := sigsyaml.UnmarshalStrict([]byte(s), &out); err != nil {
		panic(err)
	}
	return out
}
