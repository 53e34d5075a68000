package api

import (
	"reflect"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/api/defaults"
	"github.com/kpipe/kpipe/internal/api/validation"
)

// Strategy is a type's behaviour on writes, as kube's rest strategies:
// what create and update may change, and what is valid.
type Strategy interface {
	// Default fills the type's defaults, as decoding does in kube.
	Default(obj runtime.Object)
	// PrepareForCreate clears what a client may not set on create (status,
	// for types with a status subresource) and sets initial state.
	PrepareForCreate(obj runtime.Object)
	// PrepareForUpdate keeps what the main resource may not change (status)
	// and bumps metadata.generation when the spec changes.
	PrepareForUpdate(obj, old runtime.Object)
	Validate(obj runtime.Object) field.ErrorList
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}

// Warner is implemented by strategies that warn about what they accept,
// as kube's WarningsOnCreate and WarningsOnUpdate: the validate stage
// sends the warnings once the object is valid.
type Warner interface {
	WarningsOnCreate(obj runtime.Object) []string
	WarningsOnUpdate(obj, old runtime.Object) []string
}

// StatusStrategy is a type's behaviour on its /status subresource: only
// status changes.
type StatusStrategy interface {
	PrepareForUpdate(obj, old runtime.Object)
	ValidateUpdate(obj, old runtime.Object) field.ErrorList
}

// Generic is the strategy of most types. Types with a status subresource
// set HasStatus; types whose spec changes are tracked by
// metadata.generation set Generation. Create, when set, runs after the
// generic PrepareForCreate (a pod's phase, a namespace's finalizer).
type Generic struct {
	HasStatus  bool
	Generation bool
	Create     func(obj runtime.Object)
	Update     func(obj, old runtime.Object)
}

var _ Strategy = Generic{}

// Default implements Strategy.
func (Generic) Default(obj runtime.Object) { defaults.Apply(obj) }

// PrepareForCreate implements Strategy.
func (g Generic) PrepareForCreate(obj runtime.Object) {
	if g.HasStatus {
		resetField(obj, "Status")
	}
	if g.Generation {
		if m, err := meta.Accessor(obj); err == nil {
			m.SetGeneration(1)
		}
	}
	if g.Create != nil {
		g.Create(obj)
	}
}

// PrepareForUpdate implements Strategy.
func (g Generic) PrepareForUpdate(obj, old runtime.Object) {
	if g.HasStatus {
		copyField(obj, old, "Status")
	}
	if g.Generation {
		m, err1 := meta.Accessor(obj)
		om, err2 := meta.Accessor(old)
		if err1 == nil && err2 == nil {
			gen := om.GetGeneration()
			if !equality.Semantic.DeepEqual(field0(obj, "Spec"), field0(old, "Spec")) {
				gen++
			}
			m.SetGeneration(gen)
		}
	}
	if g.Update != nil {
		g.Update(obj, old)
	}
}

// Validate implements Strategy.
func (Generic) Validate(obj runtime.Object) field.ErrorList { return validation.ValidateCreate(obj) }

// ValidateUpdate implements Strategy.
func (Generic) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ValidateUpdate(obj, old)
}

// GenericStatus is the /status strategy of most types: the new object is
// the old one with the new status (and the new metadata's labels and
// annotations, as kube allows).
type GenericStatus struct{}

// PrepareForUpdate implements StatusStrategy.
func (GenericStatus) PrepareForUpdate(obj, old runtime.Object) {
	copyField(obj, old, "Spec")
}

// ValidateUpdate implements StatusStrategy.
func (GenericStatus) ValidateUpdate(obj, old runtime.Object) field.ErrorList {
	return validation.ValidateStatusUpdate(obj, old)
}

// field0 returns the named field of a struct pointer, or nil.
func field0(obj runtime.Object, name string) any {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName(name)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// resetField zeroes the named field (Status on create).
func resetField(obj runtime.Object, name string) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return
	}
	if f := v.Elem().FieldByName(name); f.IsValid() && f.CanSet() {
		f.Set(reflect.Zero(f.Type()))
	}
}

// copyField copies the named field from src to dst, both of one type.
func copyField(dst, src runtime.Object, name string) {
	dv, sv := reflect.ValueOf(dst), reflect.ValueOf(src)
	if dv.Kind() != reflect.Pointer || sv.Kind() != reflect.Pointer || dv.Type() != sv.Type() {
		return
	}
	df, sf := dv.Elem().FieldByName(name), sv.Elem().FieldByName(name)
	if df.IsValid() && df.CanSet() && sf.IsValid() {
		df.Set(sf)
	}
}
