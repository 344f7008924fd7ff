package ensurenamesubstring

import (
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/resid"
)

// reference is a kind of object other objects name, and the fields that
// name it.
type reference struct {
	target    resid.Gvk
	referrers types.FsSlice
}

// podSpecs are the kinds that hold a pod spec, and where.
var podSpecs = []struct {
	gvk  resid.Gvk
	spec string
}{
	{resid.Gvk{Version: "v1", Kind: "Pod"}, "spec/"},
	{resid.Gvk{Kind: "PodTemplate"}, "template/spec/"},
	{resid.Gvk{Kind: "Deployment"}, "spec/template/spec/"},
	{resid.Gvk{Kind: "ReplicaSet"}, "spec/template/spec/"},
	{resid.Gvk{Kind: "DaemonSet"}, "spec/template/spec/"},
	{resid.Gvk{Kind: "StatefulSet"}, "spec/template/spec/"},
	{resid.Gvk{Kind: "Job"}, "spec/template/spec/"},
	{resid.Gvk{Kind: "CronJob"}, "spec/jobTemplate/spec/template/spec/"},
}

// workloads are the kinds whose pod spec names a service account, a claim
// and a priority class (kustomize lists no ReplicaSet and no PodTemplate
// there, and adds ReplicationController).
var workloads = []struct {
	kind, spec string
}{
	{"Pod", "spec/"}, {"StatefulSet", "spec/template/spec/"}, {"Deployment", "spec/template/spec/"},
	{"ReplicationController", "spec/template/spec/"}, {"CronJob", "spec/jobTemplate/spec/template/spec/"},
	{"Job", "spec/template/spec/"}, {"DaemonSet", "spec/template/spec/"},
}

// inPodSpecs is each path in the pod spec of every kind that has one.
func inPodSpecs(paths ...string) types.FsSlice {
	var out types.FsSlice
	for _, h := range podSpecs {
		for _, p := range paths {
			out = append(out, types.FieldSpec{Gvk: h.gvk, Path: h.spec + p})
		}
	}
	return out
}

// inWorkloads is the path in the pod spec of every workload kind.
func inWorkloads(path string) types.FsSlice {
	var out types.FsSlice
	for _, w := range workloads {
		out = append(out, types.FieldSpec{Gvk: resid.Gvk{Kind: w.kind}, Path: w.spec + path})
	}
	return out
}

func field(group, version, kind, path string) types.FieldSpec {
	return types.FieldSpec{Gvk: resid.Gvk{Group: group, Version: version, Kind: kind}, Path: path}
}

func join(parts ...types.FsSlice) types.FsSlice {
	var out types.FsSlice
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// references are kustomize's name references (its documented defaults,
// kustomize api v0.20): who names a ConfigMap, a Secret, a Service, a role,
// a service account, a claim, a volume, a storage, priority or ingress
// class, a scaled workload, an admission policy.
var references = func() []reference {
	rbac := "rbac.authorization.k8s.io"
	resourceNames := types.FsSlice{field("", "", "Role", "rules/resourceNames"), field("", "", "ClusterRole", "rules/resourceNames")}
	var scaled []reference
	for _, kind := range []string{"Deployment", "ReplicationController", "ReplicaSet", "StatefulSet"} {
		scaled = append(scaled, reference{resid.Gvk{Kind: kind}, types.FsSlice{field("", "", "HorizontalPodAutoscaler", "spec/scaleTargetRef/name")}})
	}
	return append(scaled,
		reference{resid.Gvk{Version: "v1", Kind: "ConfigMap"}, join(
			inPodSpecs("volumes/configMap/name", "containers/env/valueFrom/configMapKeyRef/name",
				"initContainers/env/valueFrom/configMapKeyRef/name", "containers/envFrom/configMapRef/name",
				"initContainers/envFrom/configMapRef/name", "volumes/projected/sources/configMap/name"),
			types.FsSlice{field("", "", "Node", "spec/configSource/configMap")},
			resourceNames,
			types.FsSlice{field("", "", "Ingress", `metadata/annotations/nginx.ingress.kubernetes.io\/fastcgi-params-configmap`)})},
		reference{resid.Gvk{Version: "v1", Kind: "Secret"}, join(
			inPodSpecs("volumes/secret/secretName", "containers/env/valueFrom/secretKeyRef/name",
				"initContainers/env/valueFrom/secretKeyRef/name", "containers/envFrom/secretRef/name",
				"initContainers/envFrom/secretRef/name", "imagePullSecrets/name", "volumes/projected/sources/secret/name"),
			types.FsSlice{
				field("", "", "Ingress", "spec/tls/secretName"),
				field("", "", "Ingress", `metadata/annotations/ingress.kubernetes.io\/auth-secret`),
				field("", "", "Ingress", `metadata/annotations/nginx.ingress.kubernetes.io\/auth-secret`),
				field("", "", "Ingress", `metadata/annotations/nginx.ingress.kubernetes.io\/auth-tls-secret`),
				field("", "", "ServiceAccount", "imagePullSecrets/name"),
				field("", "", "StorageClass", "parameters/secretName"),
				field("", "", "StorageClass", "parameters/adminSecretName"),
				field("", "", "StorageClass", "parameters/userSecretName"),
				field("", "", "StorageClass", "parameters/secretRef"),
			},
			resourceNames,
			types.FsSlice{
				field("serving.knative.dev", "v1", "Service", "spec/template/spec/containers/env/valueFrom/secretKeyRef/name"),
				field("", "", "PersistentVolume", "spec/azureFile/secretName"),
			})},
		reference{resid.Gvk{Version: "v1", Kind: "Service"}, types.FsSlice{
			field("apps", "", "StatefulSet", "spec/serviceName"),
			field("", "", "Ingress", "spec/rules/http/paths/backend/serviceName"),
			field("", "", "Ingress", "spec/backend/serviceName"),
			field("", "", "Ingress", "spec/rules/http/paths/backend/service/name"),
			field("", "", "Ingress", "spec/defaultBackend/service/name"),
			field("apiregistration.k8s.io", "", "APIService", "spec/service/name"),
			field("admissionregistration.k8s.io", "", "ValidatingWebhookConfiguration", "webhooks/clientConfig/service"),
			field("admissionregistration.k8s.io", "", "MutatingWebhookConfiguration", "webhooks/clientConfig/service"),
		}},
		reference{resid.Gvk{Group: rbac, Kind: "Role"}, types.FsSlice{field(rbac, "", "RoleBinding", "roleRef/name")}},
		reference{resid.Gvk{Group: rbac, Kind: "ClusterRole"}, types.FsSlice{
			field(rbac, "", "RoleBinding", "roleRef/name"), field(rbac, "", "ClusterRoleBinding", "roleRef/name")}},
		reference{resid.Gvk{Version: "v1", Kind: "ServiceAccount"}, join(
			types.FsSlice{field(rbac, "", "RoleBinding", "subjects"), field(rbac, "", "ClusterRoleBinding", "subjects")},
			inWorkloads("serviceAccountName"))},
		reference{resid.Gvk{Version: "v1", Kind: "PersistentVolumeClaim"}, inWorkloads("volumes/persistentVolumeClaim/claimName")},
		reference{resid.Gvk{Version: "v1", Kind: "PersistentVolume"}, types.FsSlice{
			field("", "", "PersistentVolumeClaim", "spec/volumeName"), field("", "", "ClusterRole", "rules/resourceNames")}},
		reference{resid.Gvk{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}, types.FsSlice{
			field("", "", "PersistentVolume", "spec/storageClassName"),
			field("", "", "PersistentVolumeClaim", "spec/storageClassName"),
			field("", "", "StatefulSet", "spec/volumeClaimTemplates/spec/storageClassName"),
		}},
		reference{resid.Gvk{Group: "scheduling.k8s.io", Version: "v1", Kind: "PriorityClass"}, inWorkloads("priorityClassName")},
		// kustomize writes the group so (it matches no IngressClass); kept
		reference{resid.Gvk{Group: "networking.k8s.io/v1", Version: "v1", Kind: "IngressClass"}, types.FsSlice{field("", "", "Ingress", "spec/ingressClassName")}},
		reference{resid.Gvk{Group: "admissionregistration.k8s.io", Kind: "ValidatingAdmissionPolicy"}, types.FsSlice{
			field("admissionregistration.k8s.io", "", "ValidatingAdmissionPolicyBinding", "spec/policyName")}},
	)
}()
