package api

import (
	"github.com/pvkit/pvkit/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// OwnerRefs converts pvkit's owner references (meta.OwnerReference, the one
// type pvkit has for them) to the API's: the one conversion that way.
func OwnerRefs(owners []meta.OwnerReference) []metav1.OwnerReference {
	var out []metav1.OwnerReference
	for _, o := range owners {
		c := o.Controller
		out = append(out, metav1.OwnerReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: types.UID(o.UID), Controller: &c})
	}
	return out
}

// Owners converts the API's owner references to pvkit's: the one
// conversion that way.
func Owners(refs []metav1.OwnerReference) []meta.OwnerReference {
	var out []meta.OwnerReference
	for _, o := range refs {
		out = append(out, meta.OwnerReference{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name, UID: string(o.UID), Controller: o.Controller != nil && *o.Controller})
	}
	return out
}
