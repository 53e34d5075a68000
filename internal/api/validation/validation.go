// Package validation holds kube-apiserver's field validation for the served
// types, written against the versioned k8s.io/api types. Its errors are meant
// for apierrors.NewInvalid, so that a client sees the same message, in the same
// order, as kube-apiserver v1.37 would give it.
package validation

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// kind holds the validation of one served type. The functions receive the
// concrete pointer type, checked by the caller.
type kind struct {
	namespaced bool
	create     func(obj runtime.Object) field.ErrorList
	update     func(obj, old runtime.Object) field.ErrorList
	// status is nil for types without a status subresource.
	status func(obj, old runtime.Object) field.ErrorList
}

// kinds is filled by register calls in each group's file, so adding a type
// touches only that file.
var kinds = map[reflect.Type]kind{}

// register adds the validation of type T. status may be nil.
func register[T runtime.Object](namespaced bool, create func(T) field.ErrorList, update, status func(obj, old T) field.ErrorList) {
	var zero T
	k := kind{
		namespaced: namespaced,
		create:     func(obj runtime.Object) field.ErrorList { return create(obj.(T)) },
		update:     func(obj, old runtime.Object) field.ErrorList { return update(obj.(T), old.(T)) },
	}
	if status != nil {
		k.status = func(obj, old runtime.Object) field.ErrorList { return status(obj.(T), old.(T)) }
	}
	kinds[reflect.TypeOf(zero)] = k
}

// ValidateCreate returns kube's field errors for a new, defaulted object of a
// served type, or nil. Types it does not know pass unchecked.
func ValidateCreate(obj runtime.Object) field.ErrorList {
	k, ok := kinds[reflect.TypeOf(obj)]
	if !ok || isNil(obj) {
		return nil
	}
	errs := k.create(obj)
	if len(errs) == 0 {
		// kube-apiserver's generic create path checks metadata once more
		// with the path-segment rule when the type's own rules passed.
		// Only types whose own rules skip metadata (core/v1 Event) notice.
		errs = append(errs, genericMetaCreate(obj, k.namespaced)...)
	}
	return finish(errs)
}

// ValidateUpdate returns kube's field errors for replacing old with obj,
// including the immutable fields, or nil.
func ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	k, errs := updateKind(obj, old)
	if errs != nil || k == nil {
		return errs
	}
	errs = genericMetaUpdate(obj, old, k.namespaced)
	errs = append(errs, k.update(obj, old)...)
	return finish(errs)
}

// ValidateStatusUpdate returns kube's field errors for a write to the /status
// subresource. The caller is expected to have copied the spec from old, as
// kube's status strategies do before validating. For types without a status
// subresource it is ValidateUpdate.
func ValidateStatusUpdate(obj, old runtime.Object) field.ErrorList {
	k, errs := updateKind(obj, old)
	if errs != nil || k == nil {
		return errs
	}
	if k.status == nil {
		return ValidateUpdate(obj, old)
	}
	errs = genericMetaUpdate(obj, old, k.namespaced)
	errs = append(errs, k.status(obj, old)...)
	return finish(errs)
}

// updateKind finds the kind of an update, or an internal error when the two
// objects cannot be compared.
func updateKind(obj, old runtime.Object) (*kind, field.ErrorList) {
	k, ok := kinds[reflect.TypeOf(obj)]
	if !ok || isNil(obj) {
		return nil, nil
	}
	if reflect.TypeOf(old) != reflect.TypeOf(obj) || isNil(old) {
		return nil, field.ErrorList{field.InternalError(nil, fmt.Errorf("cannot validate an update from %T to %T", old, obj))}
	}
	return &k, nil
}

func isNil(obj runtime.Object) bool {
	v := reflect.ValueOf(obj)
	return !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil())
}

// genericMetaCreate is the metadata check of kube's rest.ValidateCreate.
func genericMetaCreate(obj runtime.Object, namespaced bool) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), fmt.Errorf("failed to get object metadata: %w", err))}
	}
	return apimachineryvalidation.ValidateObjectMetaAccessor(m, namespaced, pathSegmentName, field.NewPath("metadata"))
}

// genericMetaUpdate is kube's validateCommonFields, run before the type's own
// update rules on every update, status included.
func genericMetaUpdate(obj, old runtime.Object, namespaced bool) field.ErrorList {
	m, err := meta.Accessor(obj)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), fmt.Errorf("failed to get new object metadata: %w", err))}
	}
	om, err := meta.Accessor(old)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("metadata"), fmt.Errorf("failed to get old object metadata: %w", err))}
	}
	errs := apimachineryvalidation.ValidateObjectMetaAccessor(m, namespaced, pathSegmentName, field.NewPath("metadata"))
	return append(errs, apimachineryvalidation.ValidateObjectMetaAccessorUpdate(m, om, field.NewPath("metadata"))...)
}

// finish orders errors as kube-apiserver returns them: the handwritten ones
// first, with exact repeats dropped (kube filters the list through an
// aggregate, which keeps the first of equal messages), then the errors of
// declarative rules at beta level, which kube appends after them. The
// validators mark those with MarkBeta and leave out the handwritten error
// each one replaces.
func finish(errs field.ErrorList) field.ErrorList {
	if len(errs) == 0 {
		return nil
	}
	out := make(field.ErrorList, 0, len(errs))
	var declarative field.ErrorList
	seen := make(map[string]bool, len(errs))
	for _, e := range errs {
		if e.IsBeta() {
			declarative = append(declarative, e)
			continue
		}
		msg := e.Error()
		if seen[msg] {
			continue
		}
		seen[msg] = true
		out = append(out, e)
	}
	return append(out, declarative...)
}
