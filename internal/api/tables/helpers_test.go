package tables

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// now is the fake clock every test prints against.
var now = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

// ago returns a metav1.Time d before now.
func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

func agoPtr(d time.Duration) *metav1.Time { t := ago(d); return &t }

// om is object metadata created ten minutes ago.
func om(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name, CreationTimestamp: ago(10 * time.Minute)}
}

func ptr[T any](v T) *T { return &v }

// rowCase is one object and the cells `kubectl get -o wide` shows for it.
type rowCase struct {
	name string
	obj  runtime.Object
	want []any
	// conditions, when set, are the row conditions kube adds.
	conditions []metav1.TableRowCondition
}

// runRows prints each case's object and compares the cells with the
// golden ones, and their count with the resource's columns.
func runRows(t *testing.T, gr schema.GroupResource, cases []rowCase) {
	t.Helper()
	cols := Columns(gr)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := Rows(gr, tc.obj, now)
			if err != nil {
				t.Fatalf("Rows: %v", err)
			}
			if len(rows) != 1 {
				t.Fatalf("got %d rows, want 1", len(rows))
			}
			got := rows[0]
			if len(got.Cells) != len(cols) {
				t.Fatalf("got %d cells for %d columns: %#v", len(got.Cells), len(cols), got.Cells)
			}
			if !reflect.DeepEqual(got.Cells, tc.want) {
				t.Errorf("cells differ:\n%s", cellDiff(cols, got.Cells, tc.want))
			}
			if !reflect.DeepEqual(got.Conditions, tc.conditions) {
				t.Errorf("conditions = %#v, want %#v", got.Conditions, tc.conditions)
			}
			if got.Object.Raw != nil || got.Object.Object != nil {
				t.Errorf("row Object = %#v, want it left empty for the caller", got.Object)
			}
		})
	}
}

func cellDiff(cols []metav1.TableColumnDefinition, got, want []any) string {
	var s string
	for i := range max(len(got), len(want)) {
		var g, w any
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		mark := " "
		if !reflect.DeepEqual(g, w) {
			mark = "!"
		}
		name := "?"
		if i < len(cols) {
			name = cols[i].Name
		}
		s += fmt.Sprintf("%s %-16s got %#v, want %#v\n", mark, name, g, w)
	}
	return s
}
