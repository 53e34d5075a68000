package admission

import (
	"context"

	"github.com/google/cel-go/common/types/ref"

	policycel "github.com/kpipe/kpipe/internal/admission/cel"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// HolderAuthorizer answers the authz library's checks with the server's
// current authorization stage (h), as kube's library asks its authorizer:
// resource checks for any API version ("*").
func HolderAuthorizer(h *auth.Holder) policycel.Authorizer { return holderAuthorizer{h} }

type holderAuthorizer struct{ h *auth.Holder }

func (a holderAuthorizer) Authorize(ctx context.Context, c policycel.AuthzCheck) (bool, string, error) {
	attrs := &auth.Attributes{
		User: &request.User{Name: c.User.Name, UID: c.User.UID, Groups: c.User.Groups, Extra: c.User.Extra},
		Verb: c.Verb, ResourceRequest: c.ResourceRequest,
	}
	if c.ResourceRequest {
		attrs.APIGroup, attrs.APIVersion, attrs.Resource, attrs.Subresource = c.Group, "*", c.Resource, c.Subresource
		attrs.Namespace, attrs.Name = c.Namespace, c.Name
	} else {
		attrs.Path = c.Path
	}
	d, reason, err := a.h.Authorize(ctx, attrs)
	return d == auth.Allow, reason, err
}

// UserAuthorizers are `authorizer` and `authorizer.requestResource` for
// the request's user (from ctx): Input's Authorizer and RequestResource.
func UserAuthorizers(ctx context.Context, a policycel.Authorizer, group, resource, sub, namespace, name string) (ref.Val, ref.Val) {
	var u policycel.AuthzUser
	if ru, ok := request.UserFrom(ctx); ok && ru != nil {
		u = policycel.AuthzUser{Name: ru.Name, UID: ru.UID, Groups: ru.Groups, Extra: ru.Extra}
	}
	return policycel.NewAuthorizer(ctx, a, u), policycel.NewRequestResourceAuthorizer(ctx, a, u, group, resource, sub, namespace, name)
}
