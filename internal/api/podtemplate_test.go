package api

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A PodTemplate's generation follows its template, as kube's strategy has
// it, and its warnings name "template." and come only with a new generation.
func TestPodTemplateStrategy(t *testing.T) {
	const warning = "template." + archWarning
	tmpl := func(gen int64, image string) *corev1.PodTemplate {
		t := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "web.v1", Generation: gen}, Template: archTemplate()}
		t.Template.Spec.Containers[0].Image = image
		return t
	}
	s := newPodTemplateStrategy()

	t.Run("create", func(t *testing.T) {
		obj := tmpl(7, "busybox")
		s.PrepareForCreate(obj)
		if obj.Generation != 1 {
			t.Errorf("generation = %d, want 1", obj.Generation)
		}
		// No name warning: kube gives none for PodTemplates.
		if got := s.WarningsOnCreate(obj); !reflect.DeepEqual(got, []string{warning}) {
			t.Errorf("warnings = %q", got)
		}
	})
	for _, tc := range []struct {
		name     string
		obj, old *corev1.PodTemplate
		wantGen  int64
		warnings []string
	}{
		{"unchanged template keeps the generation", tmpl(9, "busybox"), tmpl(3, "busybox"), 3, nil},
		{"label change keeps the generation", func() *corev1.PodTemplate {
			o := tmpl(3, "busybox")
			o.Labels = map[string]string{"a": "b"}
			return o
		}(), tmpl(3, "busybox"), 3, nil},
		{"template change bumps it", tmpl(3, "nginx"), tmpl(3, "busybox"), 4, []string{warning}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.PrepareForUpdate(tc.obj, tc.old)
			if tc.obj.Generation != tc.wantGen {
				t.Errorf("generation = %d, want %d", tc.obj.Generation, tc.wantGen)
			}
			if got := s.WarningsOnUpdate(tc.obj, tc.old); !reflect.DeepEqual(got, tc.warnings) {
				t.Errorf("warnings = %q, want %q", got, tc.warnings)
			}
		})
	}
}
