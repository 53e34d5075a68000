package reviews

import (
	"context"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/request"
)

// fakeAuthz allows alice to get pods in team-a, and lists her rules.
type fakeAuthz struct{}

func (fakeAuthz) Authorize(_ context.Context, a *auth.Attributes) (auth.Decision, string, error) {
	if a.User.Name == "alice" && a.Verb == "get" && a.Resource == "pods" && a.Namespace == "team-a" {
		return auth.Allow, "because", nil
	}
	if a.User.Name == "mallory" {
		return auth.Deny, "never", nil
	}
	return auth.NoOpinion, "", nil
}

func (fakeAuthz) RulesFor(_ context.Context, u *request.User, ns string) ([]rbacv1.PolicyRule, bool, error) {
	if u.Name != "alice" || ns != "team-a" {
		return nil, false, nil
	}
	return []rbacv1.PolicyRule{
		{Verbs: []string{"get"}, APIGroups: []string{""}, Resources: []string{"pods"}},
		{Verbs: []string{"get"}, NonResourceURLs: []string{"/healthz"}},
	}, false, nil
}

func setup(user string) (map[string]api.CreateFunc, context.Context) {
	h := &auth.Holder{}
	h.Set(fakeAuthz{})
	rv := &Reviews{Authorizer: h, Authenticator: &auth.AuthenticatorHolder{}}
	u := &request.User{Name: user, UID: "u1", Groups: []string{"devs", request.AllAuthenticated}, Extra: map[string][]string{"k": {"v"}}}
	return rv.Handlers(), request.WithScope(context.Background(), &request.Scope{User: u})
}

func TestSelfSubjectAccessReview(t *testing.T) {
	tests := []struct {
		name        string
		user        string
		ra          *authorizationv1.ResourceAttributes
		wantAllowed bool
		wantDenied  bool
	}{
		{name: "allowed", user: "alice", ra: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "team-a"}, wantAllowed: true},
		{name: "other namespace", user: "alice", ra: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods", Namespace: "team-b"}},
		{name: "denied", user: "mallory", ra: &authorizationv1.ResourceAttributes{Verb: "get", Resource: "pods"}, wantDenied: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, ctx := setup(tt.user)
			out, err := h[api.SelfSubjectAccessReviews](ctx, "", "", &authorizationv1.SelfSubjectAccessReview{
				Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: tt.ra}})
			if err != nil {
				t.Fatal(err)
			}
			st := out.(*authorizationv1.SelfSubjectAccessReview).Status
			if st.Allowed != tt.wantAllowed || st.Denied != tt.wantDenied {
				t.Errorf("status = %+v", st)
			}
		})
	}
}

func TestReviewValidation(t *testing.T) {
	h, ctx := setup("alice")
	tests := []struct {
		name    string
		review  string
		obj     any
		ns      string
		wantMsg string
	}{
		{name: "SAR without attributes or user", review: api.SubjectAccessReviews, obj: &authorizationv1.SubjectAccessReview{},
			wantMsg: `SubjectAccessReview.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]`},
		{name: "SAR with both attributes", review: api.SubjectAccessReviews, obj: &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{}, NonResourceAttributes: &authorizationv1.NonResourceAttributes{}}},
			wantMsg: "exactly one of nonResourceAttributes or resourceAttributes must be specified"},
		{name: "SAR with metadata", review: api.SubjectAccessReviews, obj: &authorizationv1.SubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: authorizationv1.SubjectAccessReviewSpec{
			User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{}}},
			wantMsg: "metadata: Invalid value:"},
		{name: "LSAR namespace mismatch", review: api.LocalSubjectAccessReviews, ns: "a", obj: &authorizationv1.LocalSubjectAccessReview{ObjectMeta: metav1.ObjectMeta{Namespace: "a"},
			Spec: authorizationv1.SubjectAccessReviewSpec{User: "bob", ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: "b"}}},
			wantMsg: "spec.resourceAttributes.namespace: Invalid value: \"b\": must match metadata.namespace"},
		{name: "SSRR without namespace", review: api.SelfSubjectRulesReviews, obj: &authorizationv1.SelfSubjectRulesReview{}, wantMsg: "no namespace on request"},
		{name: "TokenReview without token", review: api.TokenReviews, obj: &authenticationv1.TokenReview{}, wantMsg: "token is required for TokenReview in authentication"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h[tt.review](ctx, tt.ns, "", tt.obj.(runtime.Object))
			if err == nil || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want %q", err, tt.wantMsg)
			}
			if !apierrors.IsInvalid(err) && !apierrors.IsBadRequest(err) {
				t.Errorf("err = %v, want 422 or 400", err)
			}
		})
	}
}

func TestSelfSubjectRulesReview(t *testing.T) {
	h, ctx := setup("alice")
	out, err := h[api.SelfSubjectRulesReviews](ctx, "", "", &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: "team-a"}})
	if err != nil {
		t.Fatal(err)
	}
	st := out.(*authorizationv1.SelfSubjectRulesReview).Status
	if len(st.ResourceRules) != 1 || st.ResourceRules[0].Resources[0] != "pods" || len(st.NonResourceRules) != 1 || st.NonResourceRules[0].NonResourceURLs[0] != "/healthz" || st.Incomplete {
		t.Errorf("status = %+v", st)
	}
}

func TestSelfSubjectReview(t *testing.T) {
	h, ctx := setup("alice")
	out, err := h[api.SelfSubjectReviews](ctx, "", "", &authenticationv1.SelfSubjectReview{})
	if err != nil {
		t.Fatal(err)
	}
	ui := out.(*authenticationv1.SelfSubjectReview).Status.UserInfo
	if ui.Username != "alice" || ui.UID != "u1" || strings.Join(ui.Groups, ",") != "devs,system:authenticated" || ui.Extra["k"][0] != "v" {
		t.Errorf("userInfo = %+v", ui)
	}
	// Without a user (outside the pipeline) it is a 400, as kube's.
	_, err = h[api.SelfSubjectReviews](context.Background(), "", "", &authenticationv1.SelfSubjectReview{})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("no user: err = %v", err)
	}
}

// selectorAuthz records the selectors it is asked with.
type selectorAuthz struct{ field, label *string }

func (s selectorAuthz) Authorize(_ context.Context, a *auth.Attributes) (auth.Decision, string, error) {
	*s.field, *s.label = a.FieldSelector, a.LabelSelector
	return auth.NoOpinion, "", nil
}

func (selectorAuthz) RulesFor(context.Context, *request.User, string) ([]rbacv1.PolicyRule, bool, error) {
	return nil, false, nil
}

func TestSubjectAccessReviewSelectors(t *testing.T) {
	var field, label string
	h := &auth.Holder{}
	h.Set(selectorAuthz{&field, &label})
	rv := &Reviews{Authorizer: h, Authenticator: &auth.AuthenticatorHolder{}}
	for _, tc := range []struct {
		name                 string
		ra                   *authorizationv1.ResourceAttributes
		wantField, wantLabel string
	}{
		{name: "raw selectors as written", ra: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods",
			FieldSelector: &authorizationv1.FieldSelectorAttributes{RawSelector: "spec.nodeName=n1"},
			LabelSelector: &authorizationv1.LabelSelectorAttributes{RawSelector: "app=web"}},
			wantField: "spec.nodeName=n1", wantLabel: "app=web"},
		{name: "requirements as a selector", ra: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods",
			FieldSelector: &authorizationv1.FieldSelectorAttributes{Requirements: []metav1.FieldSelectorRequirement{
				{Key: "spec.nodeName", Operator: metav1.FieldSelectorOpIn, Values: []string{"n,1"}},
				{Key: "metadata.name", Operator: metav1.FieldSelectorOpNotIn, Values: []string{"x"}},
			}},
			LabelSelector: &authorizationv1.LabelSelectorAttributes{Requirements: []metav1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}},
				{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"db"}},
				{Key: "team", Operator: metav1.LabelSelectorOpExists},
				{Key: "gone", Operator: metav1.LabelSelectorOpDoesNotExist},
			}}},
			wantField: `spec.nodeName=n\,1,metadata.name!=x`, wantLabel: "app in (a,b),tier notin (db),team,!gone"},
		{name: "none", ra: &authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			field, label = "-", "-"
			_, err := rv.Handlers()[api.SubjectAccessReviews](context.Background(), "", "", &authorizationv1.SubjectAccessReview{
				Spec: authorizationv1.SubjectAccessReviewSpec{User: "alice", ResourceAttributes: tc.ra}})
			if err != nil {
				t.Fatal(err)
			}
			if field != tc.wantField || label != tc.wantLabel {
				t.Errorf("selectors %q %q, want %q %q", field, label, tc.wantField, tc.wantLabel)
			}
		})
	}
}
