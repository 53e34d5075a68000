package serviceaccount

import (
	"context"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

var tokenRequestGK = schema.GroupKind{Group: authenticationv1.GroupName, Kind: "TokenRequest"}

// kube's bounds on spec.expirationSeconds.
const (
	defaultExpirationSeconds = 60 * 60
	minExpirationSeconds     = 10 * 60
	maxExpirationSeconds     = 1 << 32
)

// Objects reads the objects a token names, from storage.
type Objects struct {
	Resources *api.Registry
	Prefix    string
}

// get reads one object of group "" v1 resource into out.
func (o Objects) get(ctx context.Context, resource, namespace, name string, out runtime.Object) error {
	res, ok := o.Resources.Lookup("", "v1", resource)
	if !ok || res.Store == nil {
		return apierrors.NewInternalError(fmt.Errorf("%s are not served", resource))
	}
	return res.Store.Get(ctx, res.Key(o.Prefix, namespace, name), store.GetOptions{}, out)
}

// ServiceAccount reads one service account.
func (o Objects) ServiceAccount(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	sa := &corev1.ServiceAccount{}
	return sa, o.get(ctx, "serviceaccounts", namespace, name, sa)
}

// Pod reads one pod.
func (o Objects) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	return p, o.get(ctx, "pods", namespace, name, p)
}

// Secret reads one secret.
func (o Objects) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	return s, o.get(ctx, "secrets", namespace, name, s)
}

// Node reads one node.
func (o Objects) Node(ctx context.Context, name string) (*corev1.Node, error) {
	n := &corev1.Node{}
	return n, o.get(ctx, "nodes", "", name, n)
}

// TokenRequest answers POST serviceaccounts/<name>/token as kube's
// TokenREST: a token for the service account, for the requested audiences
// (the API's by default) and duration, optionally bound to a pod, a secret
// or a node.
func (t *Tokens) TokenRequest(objs Objects) api.CreateFunc {
	return func(ctx context.Context, namespace, name string, obj runtime.Object) (runtime.Object, error) {
		req, ok := obj.(*authenticationv1.TokenRequest)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("not a TokenRequest: %T", obj))
		}
		if req.Name != "" && req.Name != name {
			return nil, apierrors.NewInvalid(tokenRequestGK, name, field.ErrorList{
				field.Invalid(field.NewPath("metadata").Child("name"), req.Name, "must match the service account name if specified")})
		}
		if req.Namespace != "" && req.Namespace != namespace {
			return nil, apierrors.NewInvalid(tokenRequestGK, name, field.ErrorList{
				field.Invalid(field.NewPath("metadata").Child("namespace"), req.Namespace, "must match the service account namespace if specified")})
		}
		sa, err := objs.ServiceAccount(ctx, namespace, name)
		if err != nil {
			return nil, err
		}
		if req.UID != "" && req.UID != sa.UID {
			return nil, apierrors.NewConflict(schema.GroupResource{Group: tokenRequestGK.Group, Resource: tokenRequestGK.Kind}, name,
				fmt.Errorf("the UID in the token request (%s) does not match the UID of the service account (%s)", req.UID, sa.UID))
		}
		if len(req.Spec.Audiences) == 0 {
			req.Spec.Audiences = t.APIAudiences()
		}
		if req.Spec.ExpirationSeconds == nil {
			d := int64(defaultExpirationSeconds)
			req.Spec.ExpirationSeconds = &d
		}
		req.Name, req.Namespace, req.UID = sa.Name, sa.Namespace, sa.UID
		now := t.now()
		req.CreationTimestamp = metav1.NewTime(now)
		req.Status = authenticationv1.TokenRequestStatus{}

		var errs field.ErrorList
		exp := *req.Spec.ExpirationSeconds
		specPath := field.NewPath("spec")
		if exp < minExpirationSeconds {
			errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), exp, "may not specify a duration less than 10 minutes"))
		}
		if exp > maxExpirationSeconds {
			errs = append(errs, field.Invalid(specPath.Child("expirationSeconds"), exp, "may not specify a duration larger than 2^32 seconds"))
		}
		if len(errs) > 0 {
			return nil, apierrors.NewInvalid(tokenRequestGK, "", errs)
		}

		claims := &Claims{Kubernetes: Private{Namespace: sa.Namespace, ServiceAccount: Ref{Name: sa.Name, UID: string(sa.UID)}}}
		if ref := req.Spec.BoundObjectRef; ref != nil {
			if err := t.bind(ctx, objs, claims, ref, namespace, name); err != nil {
				return nil, err
			}
		}
		if max := int64(t.maxExp / time.Second); max > 0 && exp > max {
			if op, ok := request.OperationFrom(ctx); ok {
				op.Warn(fmt.Sprintf("requested expiration of %d seconds shortened to %d seconds", exp, max))
			}
			exp = max
			req.Spec.ExpirationSeconds = &exp
		}
		claims.Subject = Username(sa.Namespace, sa.Name)
		claims.Audience = jwt.ClaimStrings(req.Spec.Audiences)
		claims.IssuedAt = jwt.NewNumericDate(now)
		claims.NotBefore = jwt.NewNumericDate(now)
		claims.ExpiresAt = jwt.NewNumericDate(now.Add(time.Duration(exp) * time.Second))
		claims.ID = uuid.NewString()
		token, err := t.Sign(claims)
		if err != nil {
			return nil, apierrors.NewInternalError(fmt.Errorf("failed to generate token: %v", err))
		}
		req.Status = authenticationv1.TokenRequestStatus{
			Token:               token,
			ExpirationTimestamp: metav1.NewTime(now.Add(time.Duration(exp) * time.Second)),
		}
		request.AddAuditAnnotation(ctx, IssuedCredentialIDAnnotation, CredentialID(claims.ID))
		return req, nil
	}
}

// IssuedCredentialIDAnnotation is kube's audit annotation on a TokenRequest:
// the credential id (JTI=<jti>) of the token it issued, which requests
// made with the token carry in their user's extra.
const IssuedCredentialIDAnnotation = "authentication.kubernetes.io/issued-credential-id"

// webhookTokenGate is the kube feature gate (alpha, off in 1.37) that binds
// tokens to webhook configurations; kpipe has it off.
const webhookTokenGate = "APIServerWebhookAuthenticationToken"

// bind checks the object a token is bound to and names it in the claims,
// as kube's TokenREST: a pod (with the node it runs on, kube's
// ServiceAccountTokenPodNodeInfo), a secret, or a node (kube's
// ServiceAccountTokenNodeBinding, GA since 1.33).
func (t *Tokens) bind(ctx context.Context, objs Objects, c *Claims, ref *authenticationv1.BoundObjectReference, namespace, saName string) error {
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	var uid string
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		pod, err := objs.Pod(ctx, namespace, ref.Name)
		if err != nil {
			return err
		}
		if pod.Spec.ServiceAccountName != saName {
			return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token for serviceaccount %q to pod running with different serviceaccount name.", saName))
		}
		uid = string(pod.UID)
		c.Kubernetes.Pod = &Ref{Name: pod.Name, UID: uid}
		if nodeName := pod.Spec.NodeName; nodeName != "" {
			// A missing node still leaves its name in the claims, without a
			// uid; any other failure is an internal error, as in kube.
			node, err := objs.Node(ctx, nodeName)
			switch {
			case apierrors.IsNotFound(err):
				c.Kubernetes.Node = &Ref{Name: nodeName}
			case err != nil:
				return apierrors.NewInternalError(err)
			default:
				c.Kubernetes.Node = &Ref{Name: node.Name, UID: string(node.UID)}
			}
		}
	case gvk.Group == "" && gvk.Kind == "Node":
		node, err := objs.Node(ctx, ref.Name)
		if err != nil {
			return err
		}
		uid = string(node.UID)
		c.Kubernetes.Node = &Ref{Name: node.Name, UID: uid}
	case gvk.Group == "" && gvk.Kind == "Secret":
		sec, err := objs.Secret(ctx, namespace, ref.Name)
		if err != nil {
			return err
		}
		uid = string(sec.UID)
		c.Kubernetes.Secret = &Ref{Name: sec.Name, UID: uid}
	case gvk.GroupVersion() == admissionregistrationv1.SchemeGroupVersion &&
		(gvk.Kind == "ValidatingWebhookConfiguration" || gvk.Kind == "MutatingWebhookConfiguration"):
		return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s (feature gate %s is disabled)", gvk.String(), webhookTokenGate))
	default:
		return apierrors.NewBadRequest(fmt.Sprintf("cannot bind token to object of type %s", gvk.String()))
	}
	if ref.UID != "" && string(ref.UID) != uid {
		return apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, ref.Name,
			fmt.Errorf("the UID in the bound object reference (%s) does not match the UID in record. The object might have been deleted and then recreated", ref.UID))
	}
	return nil
}
