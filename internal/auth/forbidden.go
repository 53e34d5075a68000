package auth

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Forbidden is kube's refusal of a (responsewriters.Forbidden): the message
// names the user, verb and resource or path, the reason follows when there
// is one, and the details carry the group, resource and name. Stages that
// authorize outside the authorization stage (impersonation) answer with it.
func Forbidden(a *Attributes, reason string) error {
	msg := ForbiddenMessage(a)
	if reason != "" {
		msg += ": " + reason
	}
	gr := schema.GroupResource{Group: a.APIGroup, Resource: a.Resource}
	return apierrors.NewForbidden(gr, a.Name, fmt.Errorf("%s", msg))
}

// ForbiddenMessage is kube's sentence for a refused a, without the reason.
func ForbiddenMessage(a *Attributes) string {
	name := ""
	if a.User != nil {
		name = a.User.Name
	}
	if !a.ResourceRequest {
		return fmt.Sprintf("User %q cannot %s path %q", name, a.Verb, a.Path)
	}
	res := a.Resource
	if a.Subresource != "" {
		res += "/" + a.Subresource
	}
	if a.Namespace != "" {
		return fmt.Sprintf("User %q cannot %s resource %q in API group %q in the namespace %q", name, a.Verb, res, a.APIGroup, a.Namespace)
	}
	return fmt.Sprintf("User %q cannot %s resource %q in API group %q at the cluster scope", name, a.Verb, res, a.APIGroup)
}
