package decode

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"unicode"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kjson "sigs.k8s.io/json"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
	"github.com/kpipe/kpipe/internal/tracing"
)

// strictCodecs report unknown and duplicate fields alongside the object,
// so fieldValidation can decide what they mean.
var strictCodecs = serializer.NewCodecFactory(api.Scheme, serializer.EnableStrict)

// serveOperation builds the Operation of a resource write (create, update,
// patch, delete, deletecollection) and hands on. Reads, and requests for
// resources kpipe does not serve, pass straight through: the terminal
// stage answers them.
func (d *Decoder) serveOperation(w http.ResponseWriter, r *http.Request, body []byte, next http.Handler) {
	info, ok := request.InfoFrom(r.Context())
	if !ok || !info.IsResourceRequest || d.resources == nil {
		next.ServeHTTP(w, r)
		return
	}
	res, ok := d.resources.Lookup(info.APIGroup, info.APIVersion, info.Resource)
	if !ok {
		next.ServeHTTP(w, r)
		return
	}
	// kube warns of a deprecated kind on every answer of its routes,
	// errors too, ahead of any other warning.
	api.AddWarning(w.Header(), res.DeprecationWarning(info.Subresource))
	if res.Subresources[info.Subresource].IsKubelet() {
		// log, exec, attach, portforward take no body: their options
		// are in the query, read by the terminal stage.
		next.ServeHTTP(w, r)
		return
	}
	build, limit := d.write, maxRetries
	switch info.Verb {
	case "create", "update":
	case "patch":
		build, limit = d.patch, maxPatchRetries
	case "delete", "deletecollection":
		op, err := d.delete(r, info, res, body)
		if err != nil {
			status.Write(w, err)
			return
		}
		request.SetOperation(r.Context(), op)
		next.ServeHTTP(w, r)
		return
	default:
		next.ServeHTTP(w, r)
		return
	}
	// A write whose live object changed under it, with no resourceVersion
	// precondition, runs the stages again on a fresh decode of the body
	// and a fresh read of the live object, as GuaranteedUpdate does.
	for attempt := 1; ; attempt++ {
		op, err := build(r, info, res, body)
		if err != nil {
			status.Write(w, err)
			return
		}
		request.SetOperation(r.Context(), op)
		wr := r
		if info.Verb == "patch" {
			wr = asWrite(r, info, op)
		}
		next.ServeHTTP(w, wr)
		if !op.Retry {
			return
		}
		if attempt == limit {
			status.Write(w, apierrors.NewConflict(res.GroupResource(), op.Name,
				fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again")))
			return
		}
	}
}

const (
	// maxRetries bounds the re-runs of a write that keeps losing races.
	maxRetries = 10
	// maxPatchRetries is higher: kube re-applies a patch until its request
	// times out, and many clients patching one object (a controller's
	// status, labels) lose races in turn.
	maxPatchRetries = 100
)

// asWrite hands a patch to the later stages as the write it becomes: an
// update, or a create when an apply makes the object. They see a copy of
// the request's scope; its own info, which audit and metrics report,
// keeps the verb "patch".
func asWrite(r *http.Request, info *request.RequestInfo, op *request.Operation) *http.Request {
	wi := *info
	wi.Verb = "update"
	if op.Created {
		wi.Verb = "create"
	}
	var s request.Scope
	if outer := request.ScopeFrom(r.Context()); outer != nil {
		s = *outer
	}
	s.Info, s.Op = &wi, op
	return r.WithContext(request.WithScope(r.Context(), &s))
}

// write runs steps 1 to 6 of kube's create path (and the same for update):
// names from the URL, options, decoding into the expected version with the
// requested field validation, the version and namespace checks, and
// defaulting.
func (d *Decoder) write(r *http.Request, info *request.RequestInfo, res *api.Resource, body []byte) (*request.Operation, error) {
	op := &request.Operation{Resource: res, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name}
	if info.Subresource != "" {
		if _, ok := res.Subresources[info.Subresource]; !ok {
			return nil, notFound()
		}
	}
	optsKind := "CreateOptions"
	if info.Verb == "update" {
		optsKind = "UpdateOptions"
	}
	q := r.URL.Query()
	op.FieldManager = q.Get("fieldManager")
	op.FieldValidation = q.Get("fieldValidation")
	if errs := validateWriteOptions(q["dryRun"], op.FieldManager, op.FieldValidation); len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: optsKind}, "", errs)
	}
	op.DryRun = len(q["dryRun"]) > 0

	gvk := res.GroupVersionKind()
	into := res.New()
	if sub := res.Subresources[info.Subresource]; sub != nil && sub.Kind != res.Kind {
		gvk = sub.GroupVersion.WithKind(sub.Kind)
		obj, err := api.Scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		into = obj
	}
	tracing.Event(r.Context(), "About to convert to expected version")
	obj, warnings, err := decodeBody(r, body, d.limit, gvk, into, op.FieldValidation)
	if err != nil {
		return nil, err
	}
	op.Warnings = append(op.Warnings, warnings...)
	tracing.Event(r.Context(), "Conversion done")

	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if res.Namespaced {
		switch ns := m.GetNamespace(); {
		case ns == "":
			m.SetNamespace(info.Namespace)
		case ns != info.Namespace:
			return nil, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	if info.Verb == "create" {
		switch {
		case info.Subresource != "":
			// A create below an object (serviceaccounts/x/token) is named
			// by the URL.
			op.Name = info.Name
		case info.Name != "":
			// POST to a named path is kube's "create with name in URL" for
			// subresources only; a plain create names the object in its body.
			return nil, apierrors.NewMethodNotSupported(res.GroupResource(), "create")
		default:
			op.Name = m.GetName()
		}
	} else if m.GetName() != info.Name {
		if m.GetName() == "" {
			m.SetName(info.Name)
		} else {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", m.GetName(), info.Name))
		}
	}
	if gvk.Kind == res.Kind {
		res.Strategy.Default(obj)
	}
	op.Object = obj
	if info.Verb == "update" {
		if err := d.live(r.Context(), op, res.AllowCreateOnUpdate && info.Subresource == ""); err != nil {
			return nil, err
		}
		if op.Old != nil && m.GetResourceVersion() == "" && res.RequireResourceVersion {
			// kube names the resource, not the kind, in this one.
			return nil, apierrors.NewInvalid(schema.GroupKind{Group: res.GroupVersion.Group, Kind: res.Name}, m.GetName(), field.ErrorList{
				field.Invalid(field.NewPath("metadata", "resourceVersion"), uint64(0), "must be specified for an update")})
		}
		if op.Old != nil && m.GetResourceVersion() == "" {
			// An update without a resourceVersion applies to the live
			// object, as kube's AllowUnconditionalUpdate types do.
			if om, err := meta.Accessor(op.Old); err == nil {
				m.SetResourceVersion(om.GetResourceVersion())
				op.Unconditional = true
			}
		}
	}
	return op, nil
}

// decodeBody decodes into the expected kind and version. Unknown or
// duplicate fields are an error, a warning or nothing, as fieldValidation
// says (kube's default is Warn). A YAML body may not expand past limit.
func decodeBody(r *http.Request, body []byte, limit int64, gvk schema.GroupVersionKind, into runtime.Object, fieldValidation string) (runtime.Object, []string, error) {
	info, err := inputSerializer(r.Header.Get("Content-Type"), strictCodecs.SupportedMediaTypes())
	if err != nil {
		return nil, nil, err
	}
	mediaType := info.MediaType
	if len(body) == 0 {
		return nil, nil, apierrors.NewBadRequest("request body must not be empty")
	}
	if err := boundYAML(mediaType, body, limit); err != nil {
		return nil, nil, err
	}
	if obj, got, ok := decodeDirect(mediaType, body, gvk, into, fieldValidation); ok {
		return obj, nil, nil
	} else if got {
		if err := runtime.SetZeroValue(into); err != nil {
			return nil, nil, err
		}
	}
	decoder := strictCodecs.DecoderToVersion(info.StrictSerializer, gvk.GroupVersion())
	if fieldValidation == metav1.FieldValidationIgnore || info.StrictSerializer == nil {
		decoder = strictCodecs.DecoderToVersion(info.Serializer, gvk.GroupVersion())
	}
	obj, got, err := decoder.Decode(body, &gvk, into)
	var warnings []string
	if err != nil {
		strictErr, isStrict := runtime.AsStrictDecodingError(err)
		switch {
		case !isStrict, fieldValidation == metav1.FieldValidationStrict:
			return nil, nil, decodeError(err, gvk.Kind, got, body)
		default:
			for _, e := range strictErr.Errors() {
				warnings = append(warnings, e.Error())
			}
		}
	}
	if got != nil && got.GroupVersion() != gvk.GroupVersion() {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", got.GroupVersion(), gvk.GroupVersion()))
	}
	if got != nil && got.Kind != gvk.Kind {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("the kind in the data (%s) does not match the expected kind (%s)", got.Kind, gvk.Kind))
	}
	return obj, warnings, nil
}

// directDecode is off only in the test comparing the two ways.
var directDecode = true

// decodeDirect is the common case in one pass: a JSON body of the
// expected kind and version, without unknown or duplicate fields,
// unmarshalled straight into its type and defaulted, which is what the
// codec gives it after a first pass to find the kind. Anything else
// reports ok false, and touched when into was written to; the codec then
// decodes it from the start, with its errors and warnings.
func decodeDirect(mediaType string, body []byte, gvk schema.GroupVersionKind, into runtime.Object, fieldValidation string) (obj runtime.Object, touched, ok bool) {
	if !directDecode || mediaType != runtime.ContentTypeJSON || fieldValidation == metav1.FieldValidationIgnore {
		return nil, false, false
	}
	switch into.(type) {
	case nil, runtime.Unstructured, *runtime.Unknown, runtime.NestedObjectDecoder:
		return nil, false, false
	}
	kinds, _, err := api.Scheme.ObjectKinds(into)
	if err != nil || !slices.Contains(kinds, gvk) {
		return nil, false, false
	}
	strictErrs, err := kjson.UnmarshalStrict(body, into)
	if err != nil || len(strictErrs) > 0 || into.GetObjectKind().GroupVersionKind() != gvk {
		return nil, true, false
	}
	api.Scheme.Default(into)
	return into, true, true
}

// decodeError is the 400 kube answers for a body that does not decode:
// it names the kind decoded and the kind expected, or, when the body names
// no kind, shows its start.
func decodeError(err error, want string, got *schema.GroupVersionKind, body []byte) error {
	if got != nil && got.Kind != "" {
		return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", got.Kind, got.Version, want, err))
	}
	return apierrors.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", want, err, bodySummary(body, 30)))
}

// bodySummary is the start of a body for an error message: as text when
// it looks like a JSON object, in hex otherwise.
func bodySummary(b []byte, max int) string {
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		if len(b) > max {
			return string(b[:max]) + " ..."
		}
		return string(b)
	case len(b) > max:
		return hex.EncodeToString(b[:max]) + " ..."
	default:
		return hex.EncodeToString(b)
	}
}

// validateWriteOptions is kube's check of Create- and UpdateOptions.
func validateWriteOptions(dryRun []string, fieldManager, fieldValidation string) field.ErrorList {
	var errs field.ErrorList
	for i, v := range dryRun {
		if v != metav1.DryRunAll {
			errs = append(errs, field.NotSupported(field.NewPath("dryRun").Index(i), v, []string{metav1.DryRunAll}))
		}
	}
	if len(fieldManager) > 128 {
		errs = append(errs, field.TooLong(field.NewPath("fieldManager"), "", 128))
	}
	for _, r := range fieldManager {
		if !unicode.IsPrint(r) {
			errs = append(errs, field.Invalid(field.NewPath("fieldManager"), fieldManager, "must only contain printable characters"))
			break
		}
	}
	switch fieldValidation {
	case "", metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict:
	default:
		errs = append(errs, field.NotSupported(field.NewPath("fieldValidation"), fieldValidation,
			[]string{metav1.FieldValidationIgnore, metav1.FieldValidationWarn, metav1.FieldValidationStrict}))
	}
	return errs
}

// delete reads DeleteOptions from the body or the query, as kube does.
func (d *Decoder) delete(r *http.Request, info *request.RequestInfo, res *api.Resource, body []byte) (*request.Operation, error) {
	op := &request.Operation{Resource: res, Subresource: info.Subresource, Namespace: info.Namespace, Name: info.Name}
	// No route serves it (a%2Fb is name "a", subresource "b"): kube's 404
	// before reading the object.
	if info.Subresource != "" && res.Subresources[info.Subresource] == nil {
		return nil, notFound()
	}
	if info.Verb == "deletecollection" {
		// kube checks the list options before it reads the DeleteOptions.
		if _, err := api.ParseListOptions(r.URL.Query(), res); err != nil {
			return nil, err
		}
	}
	opts := &metav1.DeleteOptions{}
	if len(body) > 0 {
		s, err := inputSerializer(r.Header.Get("Content-Type"), api.Codecs.SupportedMediaTypes())
		if err != nil {
			return nil, err
		}
		if err := boundYAML(s.MediaType, body, d.limit); err != nil {
			return nil, err
		}
		gvk := metav1.SchemeGroupVersion.WithKind("DeleteOptions")
		obj, _, err := api.Codecs.DecoderToVersion(s.Serializer, metav1.SchemeGroupVersion).Decode(body, &gvk, opts)
		if err != nil {
			return nil, apierrors.NewBadRequest(err.Error())
		}
		if o, ok := obj.(*metav1.DeleteOptions); ok {
			opts = o
		}
	} else if err := api.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	// The unsafe-delete option is behind a feature kube leaves off.
	opts.IgnoreStoreReadErrorWithClusterBreakingPotential = nil
	errs := metav1validation.ValidateDeleteOptions(opts)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "DeleteOptions"}, "", errs)
	}
	op.DeleteOptions = opts
	op.DryRun = len(opts.DryRun) > 0
	if info.Verb == "delete" {
		if err := d.live(r.Context(), op, false); err != nil {
			return nil, err
		}
	}
	return op, nil
}

func notFound() error {
	return apierrors.NewGenericServerResponse(http.StatusNotFound, "", schema.GroupResource{}, "", "", 0, false)
}

// live reads the object a write or delete works on. For an update of a
// missing object it reports created where the type allows it. A name that
// is not one path segment is refused here, where kube's registry builds
// its key: after the body and options, before admission and storage.
func (d *Decoder) live(ctx context.Context, op *request.Operation, allowCreate bool) error {
	key, err := op.Resource.RequestKey(d.prefix, op.Namespace, op.Name)
	if err != nil {
		return err
	}
	old := op.Resource.New()
	err = op.Resource.Store.Get(ctx, key, store.GetOptions{}, old)
	switch {
	case err == nil:
		op.Old = old
	case apierrors.IsNotFound(err) && allowCreate:
		op.Created = true
	default:
		return err
	}
	return nil
}
