package decode

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/tracing"
)

// patchTypes are the patch Content-Types served, in kube's order.
var patchTypes = []string{
	string(types.JSONPatchType),
	string(types.MergePatchType),
	string(types.StrategicMergePatchType),
	string(types.ApplyYAMLPatchType),
}

const (
	// maxJSONPatchOperations is kube's limit on the operations of one
	// JSON patch.
	maxJSONPatchOperations = 10000
	// jsonPatchMaxCopyBytes is kube's default limit on what the "copy"
	// operations of one JSON patch may add (--json-patch-max-copy-bytes
	// is not a kube-apiserver flag; its server config defaults to 3 MiB).
	jsonPatchMaxCopyBytes = 3 * 1024 * 1024
)

// limitCopies sets json-patch's process-wide copy limit once, as
// kube-apiserver's server config does: a lower limit already set wins.
var limitCopies = sync.OnceFunc(func() {
	for {
		existing := atomic.LoadInt64(&jsonpatch.AccumulatedCopySizeLimit)
		if existing > 0 && existing < jsonPatchMaxCopyBytes {
			return
		}
		if atomic.CompareAndSwapInt64(&jsonpatch.AccumulatedCopySizeLimit, existing, jsonPatchMaxCopyBytes) {
			return
		}
	}
})

// patchTypeOf reads the Content-Type of a PATCH as kube does, up to its
// first ";" and nothing more (`application/merge-patch+json;;` is a merge
// patch); anything but the four patch types is kube's 415.
func patchTypeOf(r *http.Request) (types.PatchType, error) {
	ct := r.Header.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i > 0 {
		ct = ct[:i]
	}
	for _, t := range patchTypes {
		if ct == t {
			return types.PatchType(ct), nil
		}
	}
	return "", unsupportedMediaType(patchTypes)
}

// patch builds the Operation of a PATCH, as kube's patch handler does on
// each try of its GuaranteedUpdate: it reads the live object and applies
// the patch to it. An apply is only checked here; the field-manager stage
// merges it into the live object.
func (d *Decoder) patch(r *http.Request, info *request.RequestInfo, res *api.Resource, body []byte) (*request.Operation, error) {
	pt, err := patchTypeOf(r)
	if err != nil {
		return nil, err
	}
	op := &request.Operation{Resource: res, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name,
		PatchType: pt, PatchBytes: body}
	sub := res.Subresources[info.Subresource]
	switch {
	case info.Subresource != "" && sub == nil:
		return nil, notFound()
	case sub != nil && !slices.Contains(sub.Verbs, "patch"), sub == nil && !res.HasVerb("patch"):
		return nil, apierrors.NewMethodNotSupported(res.GroupResource(), "patch")
	}
	opts := &metav1.PatchOptions{}
	if err := api.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if errs := metav1validation.ValidatePatchOptions(opts, pt); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "PatchOptions"}, "", errs)
	}
	op.DryRun = len(opts.DryRun) > 0
	op.FieldManager = opts.FieldManager
	op.FieldValidation = opts.FieldValidation
	op.Force = opts.Force != nil && *opts.Force
	if err := boundYAML(string(pt), body, d.limit); err != nil {
		return nil, err
	}
	if err := checkPatchBody(pt, body); err != nil {
		return nil, err
	}

	apply := pt == types.ApplyYAMLPatchType
	if err := d.live(r.Context(), op, apply && info.Subresource == ""); err != nil {
		return nil, err
	}
	gvk := res.GroupVersionKind()
	current := op.Old
	if sub != nil && sub.Kind != res.Kind {
		gvk = sub.GroupVersion.WithKind(sub.Kind)
		if current, err = subresourceView(op.Old, gvk); err != nil {
			return nil, err
		}
		if apply {
			// The scale subresource takes an apply as a merge of its fields,
			// without tracking their managers.
			pt = types.MergePatchType
			if body, err = yaml.ToJSON(body); err != nil {
				return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
			apply = false
		}
	}
	if apply {
		if err := checkApply(op, res, body); err != nil {
			return nil, err
		}
		return op, nil
	}

	tracing.Event(r.Context(), "About to apply patch")
	obj, warnings, err := patchObject(pt, current, body, gvk, op.FieldValidation)
	if err != nil {
		return nil, err
	}
	op.Warnings = append(op.Warnings, warnings...)
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if err := ensureNamespace(m, res.Namespaced, info.Namespace); err != nil {
		return nil, err
	}
	if m.GetName() != info.Name {
		return nil, nameMismatch(m.GetName(), info.Name)
	}
	if gvk.Kind == res.Kind {
		res.Strategy.Default(obj)
	}
	// A resourceVersion the patch sets is a precondition. Without one the
	// patch applies to the live object, and a race runs it again.
	live, _ := meta.Accessor(current)
	if rv := m.GetResourceVersion(); rv == "" || rv == live.GetResourceVersion() {
		op.Unconditional = true
		m.SetResourceVersion(live.GetResourceVersion())
		if gvk.Kind != res.Kind {
			// A Scale without a resourceVersion sets the replicas of
			// whatever parent is live, retrying as its writer does.
			m.SetResourceVersion("")
		}
	}
	op.Object = obj
	return op, nil
}

// checkPatchBody is kube's first look at a patch: JSON for the JSON
// types, YAML (or JSON) for an apply.
func checkPatchBody(pt types.PatchType, body []byte) error {
	if pt == types.ApplyYAMLPatchType {
		if _, err := yaml.ToJSON(body); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("error encoding patch: %v", err))
		}
		return nil
	}
	if !json.Valid(body) {
		return apierrors.NewBadRequest("invalid JSON patch")
	}
	return nil
}

// checkApply checks what kube checks of an applied configuration before
// and after the merge that only the field-manager stage can make: that it
// decodes, names the object of the URL and its namespace, carries no uid
// when it creates, and whether its resourceVersion is a precondition.
func checkApply(op *request.Operation, res *api.Resource, body []byte) error {
	u, err := parseApply(body)
	if err != nil {
		return err
	}
	if name := u.GetName(); name != op.Name && (name != "" || op.Old == nil) {
		return nameMismatch(name, op.Name)
	}
	if ns := u.GetNamespace(); res.Namespaced && ns != "" && ns != op.Namespace {
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if op.Old == nil {
		if uid := u.GetUID(); uid != "" {
			return apierrors.NewConflict(res.GroupResource(), op.Name,
				fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
		}
		return nil
	}
	op.Unconditional = u.GetResourceVersion() == ""
	return nil
}

// parseApply decodes an applied configuration as kube does.
func parseApply(body []byte) (*unstructured.Unstructured, error) {
	obj := map[string]any{}
	if err := yaml.Unmarshal(body, &obj); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// patchObject applies a JSON, merge or strategic merge patch to current
// and decodes the result into a new object of gvk, as kube's patch
// handler does. Unknown and duplicate fields are errors or warnings as
// fieldValidation says.
func patchObject(pt types.PatchType, current runtime.Object, patch []byte, gvk schema.GroupVersionKind, fieldValidation string) (_ runtime.Object, _ []string, err error) {
	// json-patch and strategicpatch panic on some malformed patches (a
	// "test" without a value, a list as a merge key): a bad request.
	defer func() {
		if p := recover(); p != nil {
			err = apierrors.NewBadRequest(fmt.Sprintf("invalid patch: %v", p))
		}
		var ip *invalidPatchError
		if errors.As(err, &ip) {
			err = ip.status(gvk)
		}
	}()
	directive := fieldValidation
	if directive == "" {
		directive = metav1.FieldValidationWarn
	}
	strict := directive != metav1.FieldValidationIgnore
	into, err := api.Scheme.New(gvk)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	var (
		strictErrs []error
		// shown is what kube shows of a patch whose result is invalid.
		shown string
	)
	switch pt {
	case types.StrategicMergePatchType:
		strictErrs, shown, err = strategicPatch(current, patch, into, strict)
	case types.JSONPatchType, types.MergePatchType:
		var patched []byte
		patched, strictErrs, err = jsonPatch(pt, current, patch, gvk.GroupVersion(), strict)
		if err == nil {
			shown = string(patched)
			strictErrs, err = decodePatched(patched, into, gvk.GroupVersion(), strict, strictErrs)
		}
	default:
		err = apierrors.NewInternalError(fmt.Errorf("unexpected patch type %q", pt))
	}
	if err != nil {
		return nil, nil, err
	}
	if len(strictErrs) == 0 {
		return into, nil, nil
	}
	if directive == metav1.FieldValidationWarn {
		warnings := make([]string, len(strictErrs))
		for i, e := range strictErrs {
			warnings[i] = e.Error()
		}
		return into, warnings, nil
	}
	return nil, nil, patchInvalid(shown, runtime.NewStrictDecodingError(strictErrs))
}

// jsonPatch applies an RFC 6902 or RFC 7386 patch to current's JSON.
func jsonPatch(pt types.PatchType, current runtime.Object, patch []byte, gv schema.GroupVersion, strict bool) ([]byte, []error, error) {
	currentJS, err := runtime.Encode(api.Codecs.LegacyCodec(gv), current)
	if err != nil {
		return nil, nil, apierrors.NewInternalError(err)
	}
	var strictErrs []error
	if pt == types.MergePatchType {
		if strict {
			if strictErrs, err = kjson.UnmarshalStrict(patch, &map[string]any{}); err != nil {
				return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
			}
		}
		patched, err := jsonpatch.MergePatch(currentJS, patch)
		switch {
		case errors.Is(err, jsonpatch.ErrBadJSONPatch):
			return nil, nil, apierrors.NewBadRequest(err.Error())
		case err != nil:
			return nil, nil, asStatus(err)
		}
		return patched, strictErrs, nil
	}
	if strict {
		var ops []jsonPatchOp
		if strictErrs, err = kjson.UnmarshalStrict(patch, &ops); err != nil {
			return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
		}
		for i, e := range strictErrs {
			strictErrs[i] = fmt.Errorf("json patch %v", e)
		}
	}
	ops, err := jsonpatch.DecodePatch(patch)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(err.Error())
	}
	if len(ops) > maxJSONPatchOperations {
		return nil, nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf(
			"The allowed maximum operations in a JSON patch is %d, got %d", maxJSONPatchOperations, len(ops)))
	}
	limitCopies()
	patched, err := ops.Apply(currentJS)
	if err != nil {
		return nil, nil, apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return patched, strictErrs, nil
}

// jsonPatchOp is one RFC 6902 operation, for the strict check of its
// fields.
type jsonPatchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// decodePatched decodes a patched document into into, adding its strict
// errors to those of the patch.
func decodePatched(patched []byte, into runtime.Object, gv schema.GroupVersion, strict bool, strictErrs []error) ([]error, error) {
	info, _ := runtime.SerializerInfoForMediaType(api.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	s := info.Serializer
	if strict {
		s = info.StrictSerializer
	}
	out, got, err := api.Codecs.DecoderToVersion(s, gv).Decode(patched, nil, into)
	if err == nil && out != into {
		err = fmt.Errorf("unable to decode %s into %v", got, reflect.TypeOf(into))
	}
	if err != nil {
		strictErr, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			return nil, patchInvalid(string(patched), err)
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	}
	return strictErrs, nil
}

// strategicPatch applies a strategic merge patch with the patch meta of
// into's struct tags: containers merge by name, ports by containerPort.
func strategicPatch(current runtime.Object, patch []byte, into runtime.Object, strict bool) ([]error, string, error) {
	original, err := runtime.DefaultUnstructuredConverter.ToUnstructured(current)
	if err != nil {
		return nil, "", apierrors.NewInternalError(err)
	}
	patchMap := map[string]any{}
	var strictErrs []error
	if strict {
		if strictErrs, err = kjson.UnmarshalStrict(patch, &patchMap); err != nil {
			return nil, "", apierrors.NewBadRequest(err.Error())
		}
	} else if err := kjson.UnmarshalCaseSensitivePreserveInts(patch, &patchMap); err != nil {
		return nil, "", apierrors.NewBadRequest(err.Error())
	}
	shown := fmt.Sprintf("%+v", patchMap)
	schemaRef := reflect.New(reflect.TypeOf(into).Elem()).Interface()
	patched, err := strategicpatch.StrategicMergeMapPatch(original, patchMap, schemaRef)
	if err != nil {
		return nil, "", strategicPatchError(err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patched, into, strict); err != nil {
		strictErr, ok := runtime.AsStrictDecodingError(err)
		if !ok {
			return nil, "", patchInvalid(shown, err)
		}
		strictErrs = append(strictErrs, strictErr.Errors()...)
	}
	return strictErrs, shown, nil
}

// strategicPatchError gives the strategic merge errors kube's codes.
func strategicPatchError(err error) error {
	switch err {
	case mergepatch.ErrBadJSONDoc, mergepatch.ErrBadPatchFormatForPrimitiveList, mergepatch.ErrBadPatchFormatForRetainKeys,
		mergepatch.ErrBadPatchFormatForSetElementOrderList, mergepatch.ErrUnsupportedStrategicMergePatchFormat:
		return apierrors.NewBadRequest(err.Error())
	case mergepatch.ErrNoListOfLists, mergepatch.ErrPatchContentNotMatchRetainKeys:
		return apierrors.NewGenericServerResponse(http.StatusUnprocessableEntity, "", schema.GroupResource{}, "", err.Error(), 0, false)
	}
	return asStatus(err)
}

// asStatus answers an error that is not an API status as kube's
// ErrorToAPIStatus does: a 500 with its message as it is.
func asStatus(err error) error {
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonUnknown, Message: err.Error(),
	}}
}

// patchInvalid is kube's 422 for a patch whose result does not decode:
// shown is the patched document, or the strategic patch. patchObject
// turns it into the Status.
func patchInvalid(shown string, err error) error {
	return &invalidPatchError{shown: shown, err: err}
}

type invalidPatchError struct {
	shown string
	err   error
}

func (e *invalidPatchError) Error() string { return e.err.Error() }

// status is kube's 422 showing the document. kube shows a Secret's
// patched document too, stored values included; here a Secret's document
// is withheld, since secrets must never appear in error messages.
func (e *invalidPatchError) status(gvk schema.GroupVersionKind) error {
	shown := e.shown
	if gvk.Group == "" && gvk.Kind == "Secret" {
		shown = "<Secret content withheld>"
	}
	return apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{field.Invalid(field.NewPath("patch"), shown, e.err.Error())})
}

// ensureNamespace is kube's check of a written object's namespace: an
// empty one takes the request's, a cluster-scoped object has none.
func ensureNamespace(m metav1.Object, namespaced bool, requestNamespace string) error {
	want := requestNamespace
	if !namespaced {
		want = ""
	}
	switch ns := m.GetNamespace(); {
	case ns == want:
	case ns == "" || want == "":
		m.SetNamespace(want)
	default:
		return apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	return nil
}

func nameMismatch(got, want string) error {
	return apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", got, want))
}

// subresourceView is the live object as a subresource of another kind
// shows it: the autoscaling/v1 Scale of a workload.
func subresourceView(obj runtime.Object, gvk schema.GroupVersionKind) (runtime.Object, error) {
	if gvk.Kind != "Scale" {
		return nil, apierrors.NewInternalError(fmt.Errorf("no view of %T as %s", obj, gvk.Kind))
	}
	var (
		replicas *int32
		status   int32
		selector *metav1.LabelSelector
	)
	switch o := obj.(type) {
	case *appsv1.Deployment:
		replicas, status, selector = o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector
	case *appsv1.ReplicaSet:
		replicas, status, selector = o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector
	case *appsv1.StatefulSet:
		replicas, status, selector = o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector
	default:
		return nil, apierrors.NewInternalError(fmt.Errorf("%T has no scale", obj))
	}
	m, _ := meta.Accessor(obj)
	s := &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp()},
	}
	if replicas != nil {
		s.Spec.Replicas = *replicas
	}
	s.Status.Replicas = status
	if selector != nil {
		if sel, err := metav1.LabelSelectorAsSelector(selector); err == nil {
			s.Status.Selector = sel.String()
		}
	}
	return s, nil
}
