package api

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	authenticationV1 = schema.GroupVersion{Group: "authentication.k8s.io", Version: "v1"}
	authorizationV1  = schema.GroupVersion{Group: "authorization.k8s.io", Version: "v1"}
)

// The access review resources, by name: kube's create-only, never stored
// resources of authentication.k8s.io and authorization.k8s.io.
const (
	SelfSubjectReviews        = "selfsubjectreviews"
	TokenReviews              = "tokenreviews"
	SubjectAccessReviews      = "subjectaccessreviews"
	SelfSubjectAccessReviews  = "selfsubjectaccessreviews"
	LocalSubjectAccessReviews = "localsubjectaccessreviews"
	SelfSubjectRulesReviews   = "selfsubjectrulesreviews"
)

// reviews declares the access review resources with the handlers in
// o.Reviews.
func reviews(o Options) []*Resource {
	review := func(gv schema.GroupVersion, name, singular, kind string, namespaced bool) *Resource {
		return &Resource{GroupVersion: gv, Name: name, SingularName: singular, Kind: kind, Namespaced: namespaced,
			Verbs: []string{"create"}, Strategy: virtualStrategy{}, Create: orUnavailable(o.Reviews[name], name)}
	}
	return []*Resource{
		review(authenticationV1, SelfSubjectReviews, "selfsubjectreview", "SelfSubjectReview", false),
		review(authenticationV1, TokenReviews, "tokenreview", "TokenReview", false),
		review(authorizationV1, LocalSubjectAccessReviews, "localsubjectaccessreview", "LocalSubjectAccessReview", true),
		review(authorizationV1, SelfSubjectAccessReviews, "selfsubjectaccessreview", "SelfSubjectAccessReview", false),
		review(authorizationV1, SelfSubjectRulesReviews, "selfsubjectrulesreview", "SelfSubjectRulesReview", false),
		review(authorizationV1, SubjectAccessReviews, "subjectaccessreview", "SubjectAccessReview", false),
	}
}

// tokenSubresource is serviceaccounts/token, kube's TokenRequest.
func tokenSubresource(o Options) *Subresource {
	return &Subresource{Name: "token", Kind: "TokenRequest", GroupVersion: authenticationV1, Verbs: []string{"create"},
		Create: orUnavailable(o.TokenRequest, "serviceaccounts/token")}
}

// orUnavailable keeps a virtual resource virtual when the server gave it
// no handler (a registry built for a test): it answers 503.
func orUnavailable(f CreateFunc, name string) CreateFunc {
	if f != nil {
		return f
	}
	return func(context.Context, string, string, runtime.Object) (runtime.Object, error) {
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("%s is not served by this server", name))
	}
}

// virtualStrategy is the strategy of virtual resources: their handlers
// default and validate what they are sent, as kube's review REST does.
type virtualStrategy struct{}

func (virtualStrategy) Default(runtime.Object)                             {}
func (virtualStrategy) PrepareForCreate(runtime.Object)                    {}
func (virtualStrategy) PrepareForUpdate(_, _ runtime.Object)               {}
func (virtualStrategy) Validate(runtime.Object) field.ErrorList            { return nil }
func (virtualStrategy) ValidateUpdate(_, _ runtime.Object) field.ErrorList { return nil }
