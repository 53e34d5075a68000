package fieldmanager

import (
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/typed"

	"github.com/kpipe/kpipe/internal/api"
)

// createFields records a new object's managedFields as kube's field
// manager does for a create (or an update that creates) whose object
// carries none: one Update entry for the manager, holding the fields the
// object sets where the type's empty object does not, less the reset
// fields and the metadata the field manager never tracks. That is what
// the field manager's stack of layers computes when there is no live
// object and no earlier manager; going through the stack cost about a
// tenth of a create's throughput (its identifier is built and parsed back
// with encoding/json, the empty live object converted, the sets copied
// layer by layer). It reports false, having changed nothing, where it does not
// apply; the field manager then runs.
func createFields(res *api.Resource, obj runtime.Object, manager string) (bool, error) {
	m, err := meta.Accessor(obj)
	if err != nil || len(m.GetManagedFields()) != 0 || !utf8.ValidString(manager) {
		return false, nil
	}
	gvk := res.GroupVersionKind()
	live := res.New()
	live.GetObjectKind().SetGroupVersionKind(gvk)
	defer keepKind(obj)()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	tc := typeConverter()
	liveTyped, err := tc.ObjectToTyped(live, typed.AllowDuplicates)
	if err != nil {
		return false, nil
	}
	newTyped, err := tc.ObjectToTyped(obj, typed.AllowDuplicates)
	if err != nil {
		return false, nil
	}
	cmp, err := liveTyped.Compare(newTyped)
	if err != nil {
		return false, nil
	}
	set := cmp.Added.Union(cmp.Modified)
	gv := res.GroupVersion.String()
	if f := resetFields(res, "")[fieldpath.APIVersion(gv)]; f != nil {
		set = f.Filter(set)
	}
	set = set.Difference(untracked)
	if set.Empty() {
		// kube drops a manager left with no fields.
		m.SetManagedFields(nil)
		return true, nil
	}
	raw, err := set.ToJSON()
	if err != nil {
		return false, fmt.Errorf("encoding managed fields: %w", err)
	}
	if manager == "" {
		manager = "unknown"
	}
	m.SetManagedFields([]metav1.ManagedFieldsEntry{{
		Manager:    manager,
		Operation:  metav1.ManagedFieldsOperationUpdate,
		APIVersion: gv,
		Time:       &metav1.Time{Time: time.Now().UTC()},
		FieldsType: "FieldsV1",
		FieldsV1:   &metav1.FieldsV1{Raw: raw},
	}})
	return true, nil
}

// untracked is the metadata kube's field manager strips from every
// manager's fields (its stripMetaManager's set).
var untracked = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

// CheckCreates makes every create whose fields createFields records also
// run kube's field manager on a copy, and panic on any difference but the
// time. The in-process test servers set it, so every create the
// end-to-end tests make checks createFields against kube's field manager.
var CheckCreates bool

func (s *Stage) checkCreate(res *api.Resource, obj, got runtime.Object, manager string) {
	fm, err := s.manager(res, "")
	if err != nil {
		panic(fmt.Sprintf("fieldmanager check: %v", err))
	}
	live := res.New()
	gvk := obj.GetObjectKind().GroupVersionKind()
	want := fm.UpdateNoErrors(live, obj, manager)
	want.GetObjectKind().SetGroupVersionKind(gvk)
	if w, g := managedFields(want), managedFields(got); w != g {
		panic(fmt.Sprintf("fieldmanager check: %s: createFields recorded\n%s\nkube's field manager\n%s", res.GroupVersionKind(), g, w))
	}
}

// managedFields renders obj's managedFields without their times.
func managedFields(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return err.Error()
	}
	var b []byte
	for _, e := range m.GetManagedFields() {
		e.Time = nil
		j, err := json.Marshal(e)
		if err != nil {
			return err.Error()
		}
		b = append(append(b, j...), '\n')
	}
	return string(b)
}
