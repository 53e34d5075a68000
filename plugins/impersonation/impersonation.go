package impersonation

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"go.uber.org/zap"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// Stage switches the request's user to the one the headers ask for, once
// the authenticated user may impersonate each part of it.
type Stage struct {
	authz *auth.Holder
	log   *zap.Logger
}

var (
	_ pipeline.Stage       = (*Stage)(nil)
	_ pipeline.Provisioner = (*Stage)(nil)
)

// Provision implements pipeline.Provisioner.
func (s *Stage) Provision(env *pipeline.Env) error {
	s.log = env.Log
	if env.Shared != nil {
		// Read at each request: it holds the serving generation's
		// authorization stage, or nothing (every impersonation refused).
		s.authz = env.Shared.Authorizer
	}
	return nil
}

// kube's service account user names.
const (
	saPrefix     = "system:serviceaccount:"
	saAllGroup   = "system:serviceaccounts"
	saGroupOfNS  = "system:serviceaccounts:"
	authnGroup   = authnv1.GroupName
	authnVersion = "v1"
)

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asks, err := impersonationRequests(r.Header)
		if err != nil {
			status.Write(w, err)
			return
		}
		if len(asks) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		ctx := r.Context()
		requestor, ok := request.UserFrom(ctx)
		if !ok {
			status.Write(w, apierrors.NewInternalError(errors.New("no user found for request")))
			return
		}
		// Groups given are the authority, system:authenticated included;
		// without them a service account gets its fixed groups.
		groupsGiven := len(r.Header[authnv1.ImpersonateGroupHeader]) > 0
		username, uid := "", ""
		groups := []string{}
		extra := map[string][]string{}
		for _, ask := range asks {
			a := &auth.Attributes{User: requestor, Verb: "impersonate", ResourceRequest: true, Name: ask.Name}
			switch ask.Kind {
			case "ServiceAccount":
				a.Resource, a.Namespace = "serviceaccounts", ask.Namespace
				username = saPrefix + ask.Namespace + ":" + ask.Name
				if !groupsGiven {
					groups = []string{saAllGroup, saGroupOfNS + ask.Namespace}
				}
			case "User":
				a.Resource = "users"
				username = ask.Name
			case "Group":
				a.Resource = "groups"
				groups = append(groups, ask.Name)
			case "UserExtra":
				a.APIGroup, a.APIVersion, a.Resource, a.Subresource = authnGroup, authnVersion, "userextras", ask.FieldPath
				extra[ask.FieldPath] = append(extra[ask.FieldPath], ask.Name)
			case "UID":
				a.APIGroup, a.APIVersion, a.Resource = authnGroup, authnVersion, "uids"
				uid = ask.Name
			}
			d, reason, err := s.authz.Authorize(ctx, a)
			if err != nil || d != auth.Allow {
				s.log.Debug("impersonation forbidden", zap.String("user", requestor.Name), zap.String("resource", a.Resource), zap.String("reason", reason), zap.Error(err))
				status.Write(w, auth.Forbidden(a, reason))
				return
			}
		}
		if username != request.Anonymous {
			if !slices.Contains(groups, request.AllAuthenticated) && !slices.Contains(groups, request.AllUnauthenticated) {
				groups = append(groups, request.AllAuthenticated)
			}
		} else if !slices.Contains(groups, request.AllUnauthenticated) {
			groups = append(groups, request.AllUnauthenticated)
		}
		if len(extra) == 0 {
			extra = nil
		}
		u := &request.User{Name: username, UID: uid, Groups: groups, Extra: extra}
		if sc := request.ScopeFrom(ctx); sc != nil {
			sc.Impersonator = requestor
		}
		request.SetUser(ctx, u)
		if ce := s.log.Check(zap.DebugLevel, "impersonating"); ce != nil {
			ce.Write(zap.String("user", requestor.Name), zap.String("as", u.Name), zap.Strings("groups", u.Groups))
		}
		// Nothing after this stage should see the headers, as in kube.
		for k := range r.Header {
			if k == authnv1.ImpersonateUserHeader || k == authnv1.ImpersonateGroupHeader || k == authnv1.ImpersonateUIDHeader ||
				strings.HasPrefix(k, authnv1.ImpersonateUserExtraHeaderPrefix) {
				r.Header.Del(k)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// impersonationRequests lists what the headers ask to impersonate, in
// kube's order: the user, the groups, the extras, the uid. Groups, extras
// or a uid without a user is 400, with kube's message.
func impersonationRequests(h http.Header) ([]corev1.ObjectReference, error) {
	var asks []corev1.ObjectReference
	name := h.Get(authnv1.ImpersonateUserHeader)
	hasUser := name != ""
	if hasUser {
		if ns, sa, ok := splitServiceAccount(name); ok {
			asks = append(asks, corev1.ObjectReference{Kind: "ServiceAccount", Namespace: ns, Name: sa})
		} else {
			asks = append(asks, corev1.ObjectReference{Kind: "User", Name: name})
		}
	}
	hasGroups := false
	for _, g := range h[authnv1.ImpersonateGroupHeader] {
		hasGroups = true
		asks = append(asks, corev1.ObjectReference{Kind: "Group", Name: g})
	}
	// Header order is a map's; sorted so the checks run the same each time.
	var extraHeaders []string
	for k := range h {
		if strings.HasPrefix(k, authnv1.ImpersonateUserExtraHeaderPrefix) {
			extraHeaders = append(extraHeaders, k)
		}
	}
	sort.Strings(extraHeaders)
	for _, k := range extraHeaders {
		key := extraKey(k[len(authnv1.ImpersonateUserExtraHeaderPrefix):])
		for _, v := range h[k] {
			asks = append(asks, corev1.ObjectReference{Kind: "UserExtra", APIVersion: authnv1.SchemeGroupVersion.String(), Name: v, FieldPath: key})
		}
	}
	uid := h.Get(authnv1.ImpersonateUIDHeader)
	if uid != "" {
		asks = append(asks, corev1.ObjectReference{Kind: "UID", Name: uid, APIVersion: authnv1.SchemeGroupVersion.String()})
	}
	if (hasGroups || len(extraHeaders) > 0 || uid != "") && !hasUser {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("requested %v without impersonating a user", asks))
	}
	return asks, nil
}

// extraKey is the lowercased, %-decoded key of an Impersonate-Extra-
// header; a malformed encoding is kept as sent, as kube does.
func extraKey(raw string) string {
	lower := strings.ToLower(raw)
	if k, err := url.PathUnescape(lower); err == nil {
		return k
	}
	return lower
}

// splitServiceAccount parses system:serviceaccount:<ns>:<name> with
// kube's validation of both parts.
func splitServiceAccount(name string) (ns, sa string, ok bool) {
	rest, found := strings.CutPrefix(name, saPrefix)
	if !found {
		return "", "", false
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 2 {
		return "", "", false
	}
	if len(apivalidation.ValidateNamespaceName(parts[0], false)) != 0 || len(apivalidation.ValidateServiceAccountName(parts[1], false)) != 0 {
		return "", "", false
	}
	return parts[0], parts[1], true
}
