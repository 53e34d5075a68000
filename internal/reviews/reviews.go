// Package reviews answers kube's access review APIs, create-only resources
// that store nothing: SelfSubjectReview and TokenReview
// (authentication.k8s.io/v1), SubjectAccessReview, SelfSubjectAccessReview,
// LocalSubjectAccessReview and SelfSubjectRulesReview
// (authorization.k8s.io/v1). They ask the authorization stage's current
// decision, so their answers are the ones real requests get.
package reviews

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// Reviews holds what the handlers ask.
type Reviews struct {
	// Authorizer is the authorization stage's decision and rules.
	Authorizer *auth.Holder
	// Authenticator is the authentication stage's, for TokenReview.
	Authenticator *auth.AuthenticatorHolder
	// APIAudiences are what a TokenReview without audiences checks for.
	APIAudiences []string
}

// Handlers returns the create handlers by resource name, for api.Options.
func (rv *Reviews) Handlers() map[string]api.CreateFunc {
	return map[string]api.CreateFunc{
		api.SelfSubjectReviews:        rv.selfSubjectReview,
		api.TokenReviews:              rv.tokenReview,
		api.SubjectAccessReviews:      rv.subjectAccessReview,
		api.SelfSubjectAccessReviews:  rv.selfSubjectAccessReview,
		api.LocalSubjectAccessReviews: rv.localSubjectAccessReview,
		api.SelfSubjectRulesReviews:   rv.selfSubjectRulesReview,
	}
}

func userFrom(ctx context.Context) (*request.User, error) {
	u, ok := request.UserFrom(ctx)
	if !ok {
		return nil, apierrors.NewBadRequest("no user present on request")
	}
	return u, nil
}

func wrongType(obj runtime.Object) error {
	return apierrors.NewBadRequest(fmt.Sprintf("not a review: %T", obj))
}

// selfSubjectReview answers `kubectl auth whoami`: who the caller is.
func (rv *Reviews) selfSubjectReview(ctx context.Context, _, _ string, obj runtime.Object) (runtime.Object, error) {
	if _, ok := obj.(*authenticationv1.SelfSubjectReview); !ok {
		return nil, wrongType(obj)
	}
	u, err := userFrom(ctx)
	if err != nil {
		return nil, err
	}
	return &authenticationv1.SelfSubjectReview{
		ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.NewTime(time.Now())},
		Status:     authenticationv1.SelfSubjectReviewStatus{UserInfo: userInfo(u)},
	}, nil
}

func userInfo(u *request.User) authenticationv1.UserInfo {
	ui := authenticationv1.UserInfo{Username: u.Name, UID: u.UID, Groups: slices.Clone(u.Groups)}
	if len(u.Extra) > 0 {
		ui.Extra = map[string]authenticationv1.ExtraValue{}
		for k, v := range u.Extra {
			ui.Extra[k] = slices.Clone(v)
		}
	}
	return ui
}

// tokenReview authenticates spec.token as the server would, for the
// requested audiences (the API's when none).
func (rv *Reviews) tokenReview(ctx context.Context, namespace, _ string, obj runtime.Object) (runtime.Object, error) {
	tr, ok := obj.(*authenticationv1.TokenReview)
	if !ok {
		return nil, wrongType(obj)
	}
	if tr.Spec.Token == "" {
		return nil, apierrors.NewBadRequest("token is required for TokenReview in authentication")
	}
	if namespace != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is not allowed on this type: %v", namespace))
	}
	auds := tr.Spec.Audiences
	if len(auds) == 0 {
		auds = rv.APIAudiences
	}
	check := &auth.AudienceCheck{Want: auds}
	fake, err := http.NewRequestWithContext(auth.WithAudienceCheck(ctx, check), http.MethodGet, "/", nil)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	fake.Header.Set("Authorization", "Bearer "+tr.Spec.Token)
	u, ok, err := rv.Authenticator.AuthenticateRequest(fake)
	tr.Status = authenticationv1.TokenReviewStatus{Authenticated: ok && u != nil}
	if err != nil {
		tr.Status.Error = err.Error()
	}
	if tr.Status.Authenticated {
		tr.Status.User = userInfo(u)
		// Tokens that are not audience-bound (a static token) are for the
		// API, as kube's audience-agnostic wrapper says.
		tr.Status.Audiences = check.Matched
		if check.Matched == nil {
			tr.Status.Audiences = auds
		}
	}
	return tr, nil
}

func (rv *Reviews) subjectAccessReview(ctx context.Context, _, _ string, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SubjectAccessReview)
	if !ok {
		return nil, wrongType(obj)
	}
	if errs := validateSAR(&sar.Spec, sar.ObjectMeta, false); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName, Kind: "SubjectAccessReview"}, "", errs)
	}
	sar.Status = rv.decide(ctx, specUser(&sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

func (rv *Reviews) localSubjectAccessReview(ctx context.Context, namespace, _ string, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.LocalSubjectAccessReview)
	if !ok {
		return nil, wrongType(obj)
	}
	if namespace == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("namespace is required on this type: %v", namespace))
	}
	if namespace != sar.Namespace {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("spec.resourceAttributes.namespace must match namespace: %v", namespace))
	}
	if errs := validateSAR(&sar.Spec, sar.ObjectMeta, true); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName, Kind: "LocalSubjectAccessReview"}, "", errs)
	}
	sar.Status = rv.decide(ctx, specUser(&sar.Spec), sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

func (rv *Reviews) selfSubjectAccessReview(ctx context.Context, _, _ string, obj runtime.Object) (runtime.Object, error) {
	sar, ok := obj.(*authorizationv1.SelfSubjectAccessReview)
	if !ok {
		return nil, wrongType(obj)
	}
	if errs := validateSelfSAR(sar); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: authorizationv1.GroupName, Kind: "SelfSubjectAccessReview"}, "", errs)
	}
	u, err := userFrom(ctx)
	if err != nil {
		return nil, err
	}
	sar.Status = rv.decide(ctx, u, sar.Spec.ResourceAttributes, sar.Spec.NonResourceAttributes)
	return sar, nil
}

// specUser is the user a SubjectAccessReview asks about, as given: no
// group is added.
func specUser(spec *authorizationv1.SubjectAccessReviewSpec) *request.User {
	u := &request.User{Name: spec.User, UID: spec.UID, Groups: slices.Clone(spec.Groups)}
	if len(spec.Extra) > 0 {
		u.Extra = map[string][]string{}
		for k, v := range spec.Extra {
			u.Extra[k] = slices.Clone(v)
		}
	}
	return u
}

// decide asks the authorizer, as kube's review REST does.
func (rv *Reviews) decide(ctx context.Context, u *request.User, ra *authorizationv1.ResourceAttributes, nra *authorizationv1.NonResourceAttributes) authorizationv1.SubjectAccessReviewStatus {
	a := &auth.Attributes{User: u}
	if ra != nil {
		a.ResourceRequest = true
		a.Verb, a.Namespace, a.APIGroup, a.APIVersion = ra.Verb, ra.Namespace, ra.Group, ra.Version
		a.Resource, a.Subresource, a.Name = ra.Resource, ra.Subresource, ra.Name
		a.FieldSelector, a.LabelSelector = fieldSelector(ra.FieldSelector), labelSelector(ra.LabelSelector)
	} else if nra != nil {
		a.Verb, a.Path = nra.Verb, nra.Path
	}
	d, reason, err := rv.Authorizer.Authorize(ctx, a)
	st := authorizationv1.SubjectAccessReviewStatus{Allowed: d == auth.Allow, Denied: d == auth.Deny, Reason: reason}
	if err != nil {
		st.EvaluationError = err.Error()
	}
	return st
}

// fieldSelector is a review's field selector as a request would write it,
// for authorizers that pass selectors on (webhooks): the raw selector, or
// its requirements (one value each: In is =, NotIn is !=).
func fieldSelector(fs *authorizationv1.FieldSelectorAttributes) string {
	if fs == nil {
		return ""
	}
	if fs.RawSelector != "" {
		return fs.RawSelector
	}
	var parts []string
	for _, r := range fs.Requirements {
		if len(r.Values) != 1 {
			continue
		}
		switch r.Operator {
		case metav1.FieldSelectorOpIn:
			parts = append(parts, r.Key+"="+fields.EscapeValue(r.Values[0]))
		case metav1.FieldSelectorOpNotIn:
			parts = append(parts, r.Key+"!="+fields.EscapeValue(r.Values[0]))
		}
	}
	return strings.Join(parts, ",")
}

// labelSelector is a review's label selector as a request would write it.
func labelSelector(ls *authorizationv1.LabelSelectorAttributes) string {
	if ls == nil {
		return ""
	}
	if ls.RawSelector != "" {
		return ls.RawSelector
	}
	var parts []string
	for _, r := range ls.Requirements {
		switch r.Operator {
		case metav1.LabelSelectorOpIn:
			parts = append(parts, r.Key+" in ("+strings.Join(r.Values, ",")+")")
		case metav1.LabelSelectorOpNotIn:
			parts = append(parts, r.Key+" notin ("+strings.Join(r.Values, ",")+")")
		case metav1.LabelSelectorOpExists:
			parts = append(parts, r.Key)
		case metav1.LabelSelectorOpDoesNotExist:
			parts = append(parts, "!"+r.Key)
		}
	}
	return strings.Join(parts, ",")
}

// selfSubjectRulesReview answers `kubectl auth can-i --list`: the caller's
// rules in spec.namespace. As kube's, the answer carries only a status.
func (rv *Reviews) selfSubjectRulesReview(ctx context.Context, _, _ string, obj runtime.Object) (runtime.Object, error) {
	srr, ok := obj.(*authorizationv1.SelfSubjectRulesReview)
	if !ok {
		return nil, wrongType(obj)
	}
	u, err := userFrom(ctx)
	if err != nil {
		return nil, err
	}
	if srr.Spec.Namespace == "" {
		return nil, apierrors.NewBadRequest("no namespace on request")
	}
	rules, incomplete, err := rv.Authorizer.RulesFor(ctx, u, srr.Spec.Namespace)
	out := &authorizationv1.SelfSubjectRulesReview{Status: authorizationv1.SubjectRulesReviewStatus{
		ResourceRules:    []authorizationv1.ResourceRule{},
		NonResourceRules: []authorizationv1.NonResourceRule{},
		Incomplete:       incomplete,
	}}
	for _, r := range rules {
		if len(r.Resources) > 0 {
			out.Status.ResourceRules = append(out.Status.ResourceRules, authorizationv1.ResourceRule{
				Verbs: r.Verbs, APIGroups: r.APIGroups, Resources: r.Resources, ResourceNames: r.ResourceNames})
		}
		if len(r.NonResourceURLs) > 0 {
			out.Status.NonResourceRules = append(out.Status.NonResourceRules, authorizationv1.NonResourceRule{
				Verbs: r.Verbs, NonResourceURLs: r.NonResourceURLs})
		}
	}
	if err != nil {
		out.Status.EvaluationError = err.Error()
	}
	return out, nil
}
