// Package tables renders objects as meta.k8s.io/v1 Table rows, with the
// columns and cell formats of kube-apiserver's server-side printers, so
// that `kubectl get` prints against kpipe what it prints against kube.
//
// kube-apiserver always prints with Wide set and lets kubectl hide the
// columns whose Priority is non-zero, so every row here carries a cell for
// every column, wide ones included.
package tables

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"

	corev1 "k8s.io/api/core/v1"
)

// printer is the table form of one resource.
type printer struct {
	columns []metav1.TableColumnDefinition
	// newObj returns the typed object print expects; unstructured input is
	// converted into it first. Nil for the default printer, which reads
	// only metadata.
	newObj func() runtime.Object
	print  func(obj runtime.Object, now time.Time) (metav1.TableRow, error)
}

// typed adapts a print function on one concrete type to a printer.
func typed[T any, PT interface {
	*T
	runtime.Object
}](columns []metav1.TableColumnDefinition, print func(obj PT, now time.Time) metav1.TableRow) printer {
	return printer{
		columns: columns,
		newObj:  func() runtime.Object { return PT(new(T)) },
		print: func(obj runtime.Object, now time.Time) (metav1.TableRow, error) {
			o, ok := obj.(PT)
			if !ok {
				return metav1.TableRow{}, fmt.Errorf("tables: cannot print %T, want %T", obj, PT(nil))
			}
			return print(o, now), nil
		},
	}
}

// Column descriptions shared by most printers, taken from the swagger docs
// as kube does.
var (
	objectMetaDoc  = metav1.ObjectMeta{}.SwaggerDoc()
	nameColumn     = metav1.TableColumnDefinition{Name: "Name", Type: "string", Format: "name", Description: objectMetaDoc["name"]}
	ageColumn      = metav1.TableColumnDefinition{Name: "Age", Type: "string", Description: objectMetaDoc["creationTimestamp"]}
	containersWide = metav1.TableColumnDefinition{Name: "Containers", Type: "string", Priority: 1, Description: "Names of each container in the template."}
	imagesWide     = metav1.TableColumnDefinition{Name: "Images", Type: "string", Priority: 1, Description: "Images referenced by each container in the template."}
)

// defaultPrinter is kube's default table convertor (k8s.io/apiserver
// registry/rest/table.go), used by resources without a printer of their
// own: roles, clusterroles, limitranges, custom resources.
var defaultPrinter = printer{
	columns: []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Created At", Type: "date", Description: objectMetaDoc["creationTimestamp"]},
	},
	print: func(obj runtime.Object, _ time.Time) (metav1.TableRow, error) {
		m, err := meta.Accessor(obj)
		if err != nil {
			return metav1.TableRow{}, err
		}
		// RFC 3339 in UTC, not an age: kubectl turns a "date" column into
		// an age itself.
		return metav1.TableRow{Cells: []any{m.GetName(), m.GetCreationTimestamp().UTC().Format(time.RFC3339)}}, nil
	},
}

// printers by group and resource. Lookups are exact: a custom resource
// named "pods" in another group gets the default printer.
var printers = map[schema.GroupResource]printer{}

func register(group, resource string, p printer) {
	gr := schema.GroupResource{Group: group, Resource: resource}
	if _, dup := printers[gr]; dup {
		panic("tables: duplicate printer for " + gr.String())
	}
	printers[gr] = p
}

func printerFor(gr schema.GroupResource) printer {
	if p, ok := printers[gr]; ok {
		return p
	}
	return defaultPrinter
}

// Columns returns kube's column definitions for a resource, wide columns
// (Priority 1) included. The slice is the caller's to change.
func Columns(gr schema.GroupResource) []metav1.TableColumnDefinition {
	return append([]metav1.TableColumnDefinition(nil), printerFor(gr).columns...)
}

// Rows converts one object, or every item of a list object, into rows
// whose Cells match Columns(gr). Each row's Object is left empty for the
// caller to fill as includeObject asks.
func Rows(gr schema.GroupResource, obj runtime.Object, now time.Time) ([]metav1.TableRow, error) {
	p := printerFor(gr)
	rows := []metav1.TableRow{}
	one := func(o runtime.Object) error {
		if p.newObj != nil {
			if u, ok := o.(*unstructured.Unstructured); ok {
				t := p.newObj()
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), t); err != nil {
					return fmt.Errorf("tables: converting %s to %T: %w", gr, t, err)
				}
				o = t
			}
		}
		row, err := p.print(o, now)
		if err != nil {
			if p.newObj == nil {
				return notAcceptable(gr)
			}
			return err
		}
		rows = append(rows, row)
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, one); err != nil {
			return nil, err
		}
		return rows, nil
	}
	if err := one(obj); err != nil {
		return nil, err
	}
	return rows, nil
}

// notAcceptable is kube's answer when an object has no metadata to print.
func notAcceptable(gr schema.GroupResource) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    http.StatusNotAcceptable,
		Reason:  metav1.StatusReason("NotAcceptable"),
		Message: fmt.Sprintf("the resource %s does not support being converted to a Table", gr),
	}}
}

// age is the AGE cell: a human duration since t, "<unknown>" if unset.
func age(t metav1.Time, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

func microAge(t metav1.MicroTime, now time.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(now.Sub(t.Time))
}

// containerCells joins container names and images with commas, for the
// wide CONTAINERS and IMAGES columns.
func containerCells(containers []corev1.Container) (names, images string) {
	n := make([]string, len(containers))
	i := make([]string, len(containers))
	for k, c := range containers {
		n[k], i[k] = c.Name, c.Image
	}
	return strings.Join(n, ","), strings.Join(i, ",")
}

// listWithMore shows up to max items, then "+ N more...", or "<unset>"
// when there are none.
func listWithMore(items []string, max int) string {
	if len(items) > max {
		return fmt.Sprintf("%s + %d more...", strings.Join(items[:max], ","), len(items)-max)
	}
	if len(items) == 0 {
		return "<unset>"
	}
	return strings.Join(items, ",")
}

// replicas reads a defaulted *int32 replica count; kube defaults a nil
// count to 1 before anything prints it.
func replicas(r *int32) int64 {
	if r == nil {
		return 1
	}
	return int64(*r)
}
