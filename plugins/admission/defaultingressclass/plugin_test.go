package defaultingressclass

import (
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDefaultClass(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	class := func(name string, at time.Time, def string) networkingv1.IngressClass {
		c := networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at)}}
		if def != "" {
			c.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: def}
		}
		return c
	}
	for _, tc := range []struct {
		name    string
		classes []networkingv1.IngressClass
		want    string
	}{
		{name: "none", want: ""},
		{name: "no default", classes: []networkingv1.IngressClass{class("a", t0, ""), class("b", t0, "false")}, want: ""},
		{name: "only true counts", classes: []networkingv1.IngressClass{class("a", t0, "True"), class("b", t0, "true")}, want: "b"},
		{name: "newest wins", classes: []networkingv1.IngressClass{class("old", t0, "true"), class("new", t0.Add(time.Minute), "true")}, want: "new"},
		{name: "same instant: first name", classes: []networkingv1.IngressClass{class("b", t0, "true"), class("a", t0, "true")}, want: "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if c := defaultClass(tc.classes); c != nil {
				got = c.Name
			}
			if got != tc.want {
				t.Fatalf("default class %q, want %q", got, tc.want)
			}
		})
	}
}
