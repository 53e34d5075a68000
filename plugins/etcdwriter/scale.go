package etcdwriter

import (
	"fmt"
	"net/http"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

var autoscalingV1 = schema.GroupVersion{Group: "autoscaling", Version: "v1"}

// replicasOf reads and writes the replica count of the types with /scale.
func replicasOf(obj runtime.Object) (spec *int32, status int32, selector *metav1.LabelSelector, ok bool) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		return o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector, true
	case *appsv1.ReplicaSet:
		return o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector, true
	case *appsv1.StatefulSet:
		return o.Spec.Replicas, o.Status.Replicas, o.Spec.Selector, true
	}
	return nil, 0, nil, false
}

func setReplicas(obj runtime.Object, n int32) {
	switch o := obj.(type) {
	case *appsv1.Deployment:
		o.Spec.Replicas = &n
	case *appsv1.ReplicaSet:
		o.Spec.Replicas = &n
	case *appsv1.StatefulSet:
		o.Spec.Replicas = &n
	}
}

// scaleOf is the autoscaling/v1 Scale view of obj.
func scaleOf(obj runtime.Object) (*autoscalingv1.Scale, error) {
	spec, st, sel, ok := replicasOf(obj)
	if !ok {
		return nil, apierrors.NewInternalError(fmt.Errorf("%T has no scale", obj))
	}
	oma := obj.(metav1.ObjectMetaAccessor).GetObjectMeta()
	s := &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{
		Name: oma.GetName(), Namespace: oma.GetNamespace(), UID: oma.GetUID(),
		ResourceVersion: oma.GetResourceVersion(), CreationTimestamp: oma.GetCreationTimestamp(),
	}}
	if spec != nil {
		s.Spec.Replicas = *spec
	}
	s.Status.Replicas = st
	if sel != nil {
		ls, err := metav1.LabelSelectorAsSelector(sel)
		if err == nil {
			s.Status.Selector = ls.String()
		}
	}
	return s, nil
}

func (wr *Writer) getScale(w http.ResponseWriter, r *http.Request, res *api.Resource, info *request.RequestInfo) error {
	out, err := api.NegotiateOutput(r, false)
	if err != nil {
		return err
	}
	key, err := res.RequestKey(wr.prefix, info.Namespace, info.Name)
	if err != nil {
		return err
	}
	obj := res.New()
	if err := res.Store.Get(r.Context(), key, store.GetOptions{}, obj); err != nil {
		return err
	}
	s, err := scaleOf(obj)
	if err != nil {
		return err
	}
	return out.Encode(w, http.StatusOK, s, autoscalingV1)
}

// updateScale writes spec.replicas of the parent, with the Scale's
// resourceVersion as precondition when it has one.
func (wr *Writer) updateScale(w http.ResponseWriter, r *http.Request, res *api.Resource) error {
	op, out, err := writeSetup(r)
	if err != nil {
		return err
	}
	want, ok := op.Object.(*autoscalingv1.Scale)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected a Scale, got %T", op.Object))
	}
	if want.Spec.Replicas < 0 {
		return apierrors.NewInvalid(schema.GroupKind{Group: "autoscaling", Kind: "Scale"}, op.Name, field.ErrorList{
			field.Invalid(field.NewPath("spec", "replicas"), want.Spec.Replicas, "must be greater than or equal to 0"),
		})
	}
	var pre *store.Preconditions
	if rv := want.ResourceVersion; rv != "" {
		pre = &store.Preconditions{ResourceVersion: &rv}
	}
	stored := res.New()
	if op.DryRun {
		stored = op.Old.DeepCopyObject()
		setReplicas(stored, want.Spec.Replicas)
	} else {
		err = res.Store.GuaranteedUpdate(r.Context(), res.Key(wr.prefix, op.Namespace, op.Name), stored, false, pre,
			func(current runtime.Object, _ store.ResponseMeta) (runtime.Object, *time.Duration, error) {
				old := current.DeepCopyObject()
				setReplicas(current, want.Spec.Replicas)
				res.Strategy.PrepareForUpdate(current, old)
				return current, nil, nil
			})
		if err != nil {
			return err
		}
	}
	s, err := scaleOf(stored)
	if err != nil {
		return err
	}
	return out.Encode(w, http.StatusOK, s, autoscalingV1)
}
