package etcdwriter

import (
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/api/tables"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

var metaV1 = schema.GroupVersion{Group: "meta.k8s.io", Version: "v1"}

// respondWrite answers a write with its warnings.
func respondWrite(w http.ResponseWriter, r *http.Request, op *request.Operation, out api.Output, code int, res *api.Resource, obj runtime.Object) error {
	addWarnings(w, op.Warnings)
	return respond(w, r, out, code, res, obj)
}

// respond encodes obj, or its Table when the client asked for one.
func respond(w http.ResponseWriter, r *http.Request, out api.Output, code int, res *api.Resource, obj runtime.Object) error {
	if out.Table {
		t, err := toTable(r, res, obj)
		if err != nil {
			return err
		}
		return out.Encode(w, code, t, metaV1)
	}
	return out.Encode(w, code, obj, res.GroupVersion)
}

// toTable converts an object or a list to meta.k8s.io/v1 Table, with each
// row's object as includeObject asks (Metadata by default, as kube).
func toTable(r *http.Request, res *api.Resource, obj runtime.Object) (*metav1.Table, error) {
	var opts metav1.TableOptions
	if err := api.ParameterCodec.DecodeParameters(r.URL.Query(), metav1.SchemeGroupVersion, &opts); err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	include := opts.IncludeObject
	if include == "" {
		include = metav1.IncludeMetadata
	}
	switch include {
	case metav1.IncludeNone, metav1.IncludeMetadata, metav1.IncludeObject:
	default:
		return nil, apierrors.NewBadRequest("unrecognized includeObject value: " + string(include))
	}
	rows, err := tables.Rows(res.GroupResource(), obj, time.Now())
	if err != nil {
		return nil, err
	}
	items := []runtime.Object{obj}
	t := &metav1.Table{}
	if meta.IsListType(obj) {
		if items, err = meta.ExtractList(obj); err != nil {
			return nil, err
		}
		if lm, err := meta.ListAccessor(obj); err == nil {
			t.ResourceVersion = lm.GetResourceVersion()
			t.Continue = lm.GetContinue()
			t.RemainingItemCount = lm.GetRemainingItemCount()
		}
	} else if m, err := meta.Accessor(obj); err == nil {
		t.ResourceVersion = m.GetResourceVersion()
	}
	if !opts.NoHeaders {
		t.ColumnDefinitions = tables.Columns(res.GroupResource())
	}
	for i := range rows {
		if i >= len(items) {
			break
		}
		switch include {
		case metav1.IncludeMetadata:
			oma, ok := items[i].(metav1.ObjectMetaAccessor)
			if !ok {
				return nil, apierrors.NewInternalError(fmt.Errorf("%T has no object metadata", items[i]))
			}
			om, ok := oma.GetObjectMeta().(*metav1.ObjectMeta)
			if !ok {
				return nil, apierrors.NewInternalError(fmt.Errorf("%T has no object metadata", items[i]))
			}
			pom := &metav1.PartialObjectMetadata{ObjectMeta: *om.DeepCopy()}
			pom.APIVersion, pom.Kind = metaV1.String(), "PartialObjectMetadata"
			rows[i].Object = runtime.RawExtension{Object: pom}
		case metav1.IncludeObject:
			item := items[i].DeepCopyObject()
			item.GetObjectKind().SetGroupVersionKind(res.GroupVersionKind())
			rows[i].Object = runtime.RawExtension{Object: item}
		}
	}
	t.Rows = rows
	return t, nil
}

// listOptions reads kube's list parameters and the selectors, validated
// as kube's handlers do (api.ParseListOptions), as a store predicate.
func listOptions(r *http.Request, res *api.Resource) (store.Predicate, *metav1.ListOptions, error) {
	lo, err := api.ParseListOptions(r.URL.Query(), res)
	if err != nil {
		return store.Predicate{}, nil, err
	}
	pred := store.Predicate{Label: lo.Label, Field: lo.Field, GetAttrs: res.Attrs, Limit: lo.Limit, Continue: lo.Continue}
	if lo.Limit < 0 {
		// kube treats a negative limit as no limit.
		pred.Limit = 0
	}
	return pred, lo.ListOptions, nil
}

// hasSpecFinalizers reports a namespace whose spec.finalizers (the
// kubernetes finalizer) still hold it.
func hasSpecFinalizers(obj runtime.Object) bool {
	ns, ok := obj.(*corev1.Namespace)
	return ok && len(ns.Spec.Finalizers) > 0
}
