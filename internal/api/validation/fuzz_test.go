package validation

import (
	"reflect"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/randfill"
)

// FuzzValidateConfigMap feeds arbitrary ConfigMaps through create, update and
// the rendering of the error, none of which may panic.
func FuzzValidateConfigMap(f *testing.F) {
	f.Add("cm", "default", "k", "v", "b", "app", "web", "note", "example.com/f", "", true)
	f.Add("Bad_Name", "", "bad key", "", "k", "a/b/c", "x y", "", "custom", "gen-", false)
	f.Add("", "kube-system", "", "\x00", "", "", "", "kubernetes.io/x", "orphan", "", true)
	f.Fuzz(func(t *testing.T, name, ns, key, value, binKey, labelKey, labelValue, annKey, finalizer, generateName string, immutable bool) {
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name:            name,
				GenerateName:    generateName,
				Namespace:       ns,
				ResourceVersion: "1",
				Labels:          map[string]string{labelKey: labelValue},
				Annotations:     map[string]string{annKey: value},
				Finalizers:      []string{finalizer},
			},
			Data:       map[string]string{key: value},
			BinaryData: map[string][]byte{binKey: []byte(value)},
			Immutable:  &immutable,
		}
		old := cm.DeepCopy()
		old.Data[key+"x"] = value
		for _, errs := range []field.ErrorList{
			ValidateCreate(cm),
			ValidateUpdate(cm, old),
			ValidateStatusUpdate(cm, old),
		} {
			if len(errs) > 0 {
				_ = apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, name, errs).Error()
			}
		}
	})
}

// TestRandomObjectsDoNotPanic fills every served type with random data, nil
// pointers included, and validates it every way.
func TestRandomObjectsDoNotPanic(t *testing.T) {
	types := make([]reflect.Type, 0, len(kinds))
	for typ := range kinds {
		types = append(types, typ)
	}
	sort.Slice(types, func(i, j int) bool { return types[i].String() < types[j].String() })
	for _, typ := range types {
		t.Run(typ.Elem().Name(), func(t *testing.T) {
			filler := randfill.NewWithSeed(1).NilChance(0.3).NumElements(0, 3).Funcs(
				// A RawExtension's Object is an interface randfill cannot
				// fill; decoded objects only carry raw bytes.
				func(e *runtime.RawExtension, c randfill.Continue) { c.Fill(&e.Raw) })
			for i := 0; i < 40; i++ {
				obj := reflect.New(typ.Elem()).Interface().(runtime.Object)
				old := reflect.New(typ.Elem()).Interface().(runtime.Object)
				if i > 0 {
					filler.Fill(obj)
					filler.Fill(old)
				}
				for _, errs := range []field.ErrorList{ValidateCreate(obj), ValidateUpdate(obj, old), ValidateStatusUpdate(obj, old)} {
					// Render each error, bad value included; the aggregate
					// message is quadratic in the error count.
					for _, e := range errs {
						_ = e.Error()
					}
				}
			}
		})
	}
}
