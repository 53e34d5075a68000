package fieldmanager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/applyconfigurations"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/status"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// Stage is the field-manager stage. Its managers are built on first use,
// one per resource and subresource, and safe for concurrent use, so a
// retried write may re-enter it.
type Stage struct {
	mu       sync.Mutex
	managers map[managerKey]*managedfields.FieldManager
}

var _ pipeline.Stage = (*Stage)(nil)

type managerKey struct {
	gvk         schema.GroupVersionKind
	subresource string
}

func newStage() *Stage { return &Stage{managers: map[managerKey]*managedfields.FieldManager{}} }

// typeConverter knows the schema of every built-in type; parsing it is
// costly, so it is built once for the process.
var typeConverter = sync.OnceValue(func() managedfields.TypeConverter {
	return applyconfigurations.NewTypeConverter(api.Scheme)
})

// convertor converts without copying an object already in the target
// version, as kube's field managers' convertor does: the safe one deep
// copies the object twice on every write only to read it.
var convertor = runtime.UnsafeObjectConvertor(api.Scheme)

// Middleware implements pipeline.Stage.
func (s *Stage) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op, ok := request.OperationFrom(r.Context())
		if !ok || !managed(op) {
			next.ServeHTTP(w, r)
			return
		}
		if err := s.manage(r, op); err != nil {
			status.Write(w, err)
			return
		}
		if op.DryRun || op.PatchType == types.ApplyYAMLPatchType {
			next.ServeHTTP(w, r)
			return
		}
		// When etcd refuses the object as too large, kube writes it again
		// without managedFields, which can be most of it. Applies are not
		// retried: their managedFields are the point.
		c := &catcher{ResponseWriter: w, header: w.Header().Clone()}
		next.ServeHTTP(c, r)
		if !c.tooLarge() {
			c.release()
			return
		}
		if m, err := meta.Accessor(op.Object); err == nil {
			m.SetManagedFields(nil)
		}
		next.ServeHTTP(w, r)
	})
}

// managed reports whether op writes an object whose fields are tracked:
// creates, updates and patches of a resource or its status. The scale
// subresource writes only its parent's replicas and is passed on.
func managed(op *request.Operation) bool {
	if op.DeleteOptions != nil || (op.Object == nil && op.PatchType != types.ApplyYAMLPatchType) {
		return false
	}
	// Virtual resources (access reviews) store nothing, and the type
	// converter has no schema for them.
	if op.Resource.VirtualCreate(op.Subresource) != nil {
		return false
	}
	sub := op.Resource.Subresources[op.Subresource]
	return op.Subresource == "" || (sub != nil && sub.Kind == op.Resource.Kind)
}

// manage records the write's manager in op.Object's managedFields, or,
// for an apply, merges the applied configuration into the live object.
func (s *Stage) manage(r *http.Request, op *request.Operation) error {
	if op.Old == nil && op.Subresource == "" && op.PatchType != types.ApplyYAMLPatchType {
		name := managerName(op.FieldManager, r.UserAgent())
		var want runtime.Object
		if CheckCreates {
			want = op.Object.DeepCopyObject()
		}
		done, err := createFields(op.Resource, op.Object, name)
		if err != nil {
			return apierrors.NewInternalError(err)
		}
		if done {
			if want != nil {
				s.checkCreate(op.Resource, want, op.Object, name)
			}
			return nil
		}
	}
	fm, err := s.manager(op.Resource, op.Subresource)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	live := op.Old
	if live == nil {
		live = op.Resource.New()
	}
	// The manager converts to the served version in place (kube's field
	// managers get the unsafe convertor too), which stamps apiVersion and
	// kind on the objects: they are put back as they were.
	defer keepKind(live)()
	if op.PatchType != types.ApplyYAMLPatchType {
		obj := op.Object
		gvk := obj.GetObjectKind().GroupVersionKind()
		op.Object = fm.UpdateNoErrors(live, obj, managerName(op.FieldManager, r.UserAgent()))
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		op.Object.GetObjectKind().SetGroupVersionKind(gvk)
		return nil
	}
	patch := map[string]any{}
	if err := yaml.Unmarshal(op.PatchBytes, &patch); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))
	}
	obj, err := fm.Apply(live, &unstructured.Unstructured{Object: patch}, op.FieldManager, op.Force)
	if err != nil {
		return asStatus(err)
	}
	if v := op.FieldValidation; v != metav1.FieldValidationIgnore {
		if err := yaml.UnmarshalStrict(op.PatchBytes, &map[string]any{}); err != nil {
			if v == metav1.FieldValidationStrict {
				return apierrors.NewBadRequest(fmt.Sprintf("error strict decoding patch: %v", err))
			}
			op.Warn(err.Error())
		}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return apierrors.NewInternalError(err)
	}
	// An applied configuration without a namespace takes the request's.
	if ns := m.GetNamespace(); !op.Resource.Namespaced {
		m.SetNamespace("")
	} else if ns == "" {
		m.SetNamespace(op.Namespace)
	}
	op.Object = obj
	return nil
}

// keepKind returns a function that sets o's apiVersion and kind back to
// what they are now.
func keepKind(o runtime.Object) func() {
	gvk := o.GetObjectKind().GroupVersionKind()
	return func() { o.GetObjectKind().SetGroupVersionKind(gvk) }
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

// manager returns the field manager of res (or its subresource), built
// on first use.
func (s *Stage) manager(res *api.Resource, subresource string) (*managedfields.FieldManager, error) {
	key := managerKey{res.GroupVersionKind(), subresource}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fm, ok := s.managers[key]; ok {
		return fm, nil
	}
	fm, err := managedfields.NewDefaultFieldManager(typeConverter(), convertor, defaulter(res.Strategy.Default), api.Scheme,
		key.gvk, key.gvk.GroupVersion(), subresource, resetFields(res, subresource))
	if err != nil {
		return nil, err
	}
	s.managers[key] = fm
	return fm, nil
}

// resetFields are the fields a write may not set, whose ownership is not
// tracked, as kube's strategies declare them: status on the main
// resource of a type with a status subresource, spec on that subresource.
func resetFields(res *api.Resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	if res.Subresources["status"] == nil {
		return nil
	}
	reset := "status"
	if subresource == "status" {
		reset = "spec"
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(res.GroupVersion.String()): fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie(reset))),
	}
}

// defaulter fills an applied object's defaults with the type's strategy.
type defaulter func(runtime.Object)

func (d defaulter) Default(obj runtime.Object) { d(obj) }

// managerName is the fieldManager option or, without one, what kube
// derives from the User-Agent: the part before the first '/', printable
// characters only, at most 128 bytes.
func managerName(fieldManager, userAgent string) string {
	if fieldManager != "" {
		return fieldManager
	}
	prefix, _, _ := strings.Cut(userAgent, "/")
	var b strings.Builder
	for _, c := range prefix {
		if !unicode.IsPrint(c) {
			continue
		}
		if b.Len()+utf8.RuneLen(c) > validation.FieldManagerMaxLength {
			break
		}
		b.WriteRune(c)
	}
	return b.String()
}

// catcher holds back a 500 answer, to see whether it is etcd's "request
// is too large"; every other answer goes straight through.
type catcher struct {
	http.ResponseWriter
	header http.Header
	code   int
	held   bytes.Buffer
}

func (c *catcher) Header() http.Header { return c.header }

func (c *catcher) WriteHeader(code int) {
	if c.code != 0 {
		return
	}
	c.code = code
	if code != http.StatusInternalServerError {
		c.pass()
	}
}

func (c *catcher) Write(p []byte) (int, error) {
	if c.code == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.code == http.StatusInternalServerError {
		return c.held.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (c *catcher) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// pass sends the header on: it started as a copy of the one below, so the
// warnings earlier stages set there are kept.
func (c *catcher) pass() {
	h := c.ResponseWriter.Header()
	for k, v := range c.header {
		h[k] = v
	}
	c.ResponseWriter.WriteHeader(c.code)
}

// tooLarge reports a held answer that is etcd's refusal of the size.
func (c *catcher) tooLarge() bool {
	if c.code != http.StatusInternalServerError {
		return false
	}
	st := &metav1.Status{}
	if err := json.Unmarshal(c.held.Bytes(), st); err != nil {
		return false
	}
	return store.IsRequestTooLarge(&apierrors.StatusError{ErrStatus: *st})
}

// release sends a held answer on.
func (c *catcher) release() {
	if c.code != http.StatusInternalServerError {
		return
	}
	c.pass()
	_, _ = c.ResponseWriter.Write(c.held.Bytes())
}
