package webhook

import (
	"encoding/json"
	"fmt"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/admission/matching"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
)

// Request is what a webhook is told about one admission request: the
// parts of the AdmissionReview that do not change between webhooks.
type Request struct {
	Attributes *admission.Attributes
	User       *request.User
}

// Resource is the request's group/version/resource.
func (r *Request) Resource() schema.GroupVersionResource {
	return r.Attributes.Op.Resource.GroupVersion.WithResource(r.Attributes.Op.Resource.Name)
}

// Kind is the kind of the object written: a subresource may write
// another kind (pods/binding a Binding, deployments/scale a Scale).
func (r *Request) Kind() schema.GroupVersionKind {
	return matching.FromAttributes(r.Attributes).Kind
}

// Review builds the AdmissionReview (admission.k8s.io/v1) sent to one
// webhook, with a fresh uid. In kpipe every group/resource is served in
// one version, so the resource and kind the webhook is called for are
// the request's own.
func (r *Request) Review(uid types.UID) (*admissionv1.AdmissionReview, error) {
	a := r.Attributes
	op := a.Op
	gvr := r.Resource()
	gvk := r.Kind()
	object, err := raw(op.Object, objectKind(op.Object, gvk))
	if err != nil {
		return nil, err
	}
	old, err := raw(op.Old, objectKind(op.Old, gvk))
	if err != nil {
		return nil, err
	}
	options, err := r.options()
	if err != nil {
		return nil, err
	}
	dryRun := op.DryRun
	user := authenticationv1.UserInfo{Extra: map[string]authenticationv1.ExtraValue{}}
	if r.User != nil {
		user.Username, user.UID, user.Groups = r.User.Name, r.User.UID, r.User.Groups
		for k, v := range r.User.Extra {
			user.Extra[k] = authenticationv1.ExtraValue(v)
		}
	}
	kind := metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
	resource := metav1.GroupVersionResource{Group: gvr.Group, Version: gvr.Version, Resource: gvr.Resource}
	return &admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: admissionv1.SchemeGroupVersion.String(), Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:                uid,
			Kind:               kind,
			Resource:           resource,
			SubResource:        op.Subresource,
			RequestKind:        &kind,
			RequestResource:    &resource,
			RequestSubResource: op.Subresource,
			Name:               a.Name(),
			Namespace:          op.Namespace,
			Operation:          admissionv1.Operation(a.Operation),
			UserInfo:           user,
			Object:             object,
			OldObject:          old,
			DryRun:             &dryRun,
			Options:            options,
		},
	}, nil
}

// options are the request's CreateOptions, UpdateOptions, PatchOptions or
// DeleteOptions, as kube sends them.
func (r *Request) options() (runtime.RawExtension, error) {
	op := r.Attributes.Op
	var dryRun []string
	if op.DryRun {
		dryRun = []string{metav1.DryRunAll}
	}
	var obj runtime.Object
	switch r.Attributes.Operation {
	case admission.Create:
		obj = &metav1.CreateOptions{DryRun: dryRun, FieldManager: op.FieldManager, FieldValidation: op.FieldValidation}
	case admission.Update:
		if r.Attributes.Info != nil && r.Attributes.Info.Verb == "patch" {
			p := &metav1.PatchOptions{DryRun: dryRun, FieldManager: op.FieldManager, FieldValidation: op.FieldValidation}
			if op.Force {
				force := true
				p.Force = &force
			}
			obj = p
		} else {
			obj = &metav1.UpdateOptions{DryRun: dryRun, FieldManager: op.FieldManager, FieldValidation: op.FieldValidation}
		}
	case admission.Delete:
		d := &metav1.DeleteOptions{}
		if op.DeleteOptions != nil {
			d = op.DeleteOptions.DeepCopy()
		}
		obj = d
	default:
		return runtime.RawExtension{}, nil
	}
	kinds, _, err := api.Scheme.ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return runtime.RawExtension{}, fmt.Errorf("options %T: %v", obj, err)
	}
	return raw(obj, metav1.SchemeGroupVersion.WithKind(kinds[0].Kind))
}

// raw is obj as JSON with the apiVersion and kind gvk, the form a webhook
// reads; nil stays empty (null in the review).
func raw(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.RawExtension, error) {
	if obj == nil {
		return runtime.RawExtension{}, nil
	}
	c := obj.DeepCopyObject()
	c.GetObjectKind().SetGroupVersionKind(gvk)
	b, err := json.Marshal(c)
	if err != nil {
		return runtime.RawExtension{}, err
	}
	return runtime.RawExtension{Raw: b}, nil
}

// objectKind is the kind obj is sent as: its Go type's kind in the
// scheme, preferring the group of want (the request's kind), else want.
func objectKind(obj runtime.Object, want schema.GroupVersionKind) schema.GroupVersionKind {
	if obj == nil {
		return want
	}
	if _, ok := obj.(runtime.Unstructured); ok {
		if gvk := obj.GetObjectKind().GroupVersionKind(); gvk.Kind != "" {
			return gvk
		}
		return want
	}
	kinds, _, err := api.Scheme.ObjectKinds(obj)
	if err != nil || len(kinds) == 0 {
		return want
	}
	for _, k := range kinds {
		if k == want {
			return k
		}
	}
	for _, k := range kinds {
		if k.Group == want.Group {
			return k
		}
	}
	return kinds[0]
}

// Response is a webhook's checked answer.
type Response struct {
	Allowed          bool
	Result           *metav1.Status
	Patch            []byte
	PatchType        admissionv1.PatchType
	Warnings         []string
	AuditAnnotations map[string]string
}

// Verify checks an answer as kube does: a v1 AdmissionReview with a
// response for our uid; a patch only from a mutating webhook, and only
// with its patchType.
func Verify(uid types.UID, mutating bool, review *admissionv1.AdmissionReview) (*Response, error) {
	if review.Response == nil {
		return nil, fmt.Errorf("webhook response was absent")
	}
	if review.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, review.Response.UID)
	}
	want := admissionv1.SchemeGroupVersion.WithKind("AdmissionReview")
	if got := review.GroupVersionKind(); got != want {
		return nil, fmt.Errorf("expected webhook response of %v, got %v", want.String(), got.String())
	}
	r := review.Response
	out := &Response{Allowed: r.Allowed, Result: r.Result, Warnings: r.Warnings, AuditAnnotations: r.AuditAnnotations}
	if mutating {
		if len(r.Patch) > 0 && r.PatchType == nil {
			return nil, fmt.Errorf("webhook returned response.patch but not response.patchType")
		}
		if len(r.Patch) == 0 && r.PatchType != nil {
			return nil, fmt.Errorf("webhook returned response.patchType but not response.patch")
		}
		out.Patch = r.Patch
		if r.PatchType != nil {
			if *r.PatchType == "" {
				return nil, fmt.Errorf("webhook returned invalid response.patchType of %q", *r.PatchType)
			}
			out.PatchType = *r.PatchType
		}
		return out, nil
	}
	if len(r.Patch) > 0 {
		return nil, fmt.Errorf("validating webhook may not return response.patch")
	}
	if r.PatchType != nil {
		return nil, fmt.Errorf("validating webhook may not return response.patchType")
	}
	return out, nil
}

// verifyV1beta1 checks an admission.k8s.io/v1beta1 answer as kube does:
// only that it has a response; a patch is a JSONPatch.
func verifyV1beta1(_ types.UID, mutating bool, review *admissionv1.AdmissionReview) (*Response, error) {
	if review.Response == nil {
		return nil, fmt.Errorf("webhook response was absent")
	}
	r := review.Response
	out := &Response{Allowed: r.Allowed, Result: r.Result, Warnings: r.Warnings, AuditAnnotations: r.AuditAnnotations}
	if mutating && len(r.Patch) > 0 {
		out.Patch, out.PatchType = r.Patch, admissionv1.PatchTypeJSONPatch
	}
	return out, nil
}
