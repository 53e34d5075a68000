package store

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
)

func podNames(l *corev1.PodList) []string {
	var out []string
	for _, p := range l.Items {
		out = append(out, p.Name)
	}
	return out
}

func TestListSelectors(t *testing.T) {
	t.Parallel()
	s, p := newPodStore(t)
	ctx := testCtx(t)
	for _, pd := range []*corev1.Pod{
		pod("a", "p1", "n1", map[string]string{"app": "web"}),
		pod("a", "p2", "n2", map[string]string{"app": "db"}),
		pod("b", "p3", "n1", map[string]string{"app": "web"}),
		pod("b", "p4", "n2", nil),
	} {
		mustCreate(t, s, key(p, pd.Namespace, pd.Name), pd)
	}
	tests := []struct {
		name      string
		key       string
		recursive bool
		label     string
		field     string
		want      []string
	}{
		{name: "everything", key: p, recursive: true, want: []string{"p1", "p2", "p3", "p4"}},
		{name: "one namespace", key: p + "/a", recursive: true, want: []string{"p1", "p2"}},
		{name: "label selector", key: p, recursive: true, label: "app=web", want: []string{"p1", "p3"}},
		{name: "label exists", key: p, recursive: true, label: "!app", want: []string{"p4"}},
		{name: "field selector", key: p, recursive: true, field: "spec.nodeName=n2", want: []string{"p2", "p4"}},
		{name: "label and field", key: p, recursive: true, label: "app=web", field: "metadata.namespace=b", want: []string{"p3"}},
		{name: "single key", key: key(p, "a", "p2"), want: []string{"p2"}},
		{name: "single key filtered out", key: key(p, "a", "p2"), label: "app=web", want: nil},
		{name: "single missing key", key: key(p, "a", "nope"), want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pred := Predicate{GetAttrs: podAttrs}
			var err error
			if tc.label != "" {
				if pred.Label, err = labels.Parse(tc.label); err != nil {
					t.Fatal(err)
				}
			}
			if tc.field != "" {
				if pred.Field, err = fields.ParseSelector(tc.field); err != nil {
					t.Fatal(err)
				}
			}
			list := &corev1.PodList{}
			if err := s.GetList(ctx, tc.key, ListOptions{Recursive: tc.recursive, Predicate: pred}, list); err != nil {
				t.Fatal(err)
			}
			if got := podNames(list); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			if list.Items == nil {
				t.Fatal("items is nil, want an empty list")
			}
			if list.ResourceVersion == "" || list.Continue != "" || list.RemainingItemCount != nil {
				t.Fatalf("list meta %+v", list.ListMeta)
			}
			for _, it := range list.Items {
				if it.ResourceVersion == "" || it.Kind != "" {
					t.Fatalf("item %s: RV %q kind %q", it.Name, it.ResourceVersion, it.Kind)
				}
			}
		})
	}
}

func TestListResourceVersions(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	k := key(p, "ns", "x")
	first := mustCreate(t, s, k, cm("ns", "x", nil, map[string]string{"v": "1"})).(*corev1.ConfigMap)
	second := setData(t, s, k, map[string]string{"v": "2"})

	t.Run("exact reads the old state", func(t *testing.T) {
		list := &corev1.ConfigMapList{}
		err := s.GetList(ctx, p, ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, list)
		if err != nil {
			t.Fatal(err)
		}
		if list.ResourceVersion != first.ResourceVersion || len(list.Items) != 1 || list.Items[0].Data["v"] != "1" {
			t.Fatalf("got RV %s items %+v", list.ResourceVersion, list.Items)
		}
	})
	t.Run("not older than reads the current state", func(t *testing.T) {
		list := &corev1.ConfigMapList{}
		err := s.GetList(ctx, p, ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, list)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].ResourceVersion != second.ResourceVersion {
			t.Fatalf("got %+v", list.Items)
		}
	})
	t.Run("not older than a future revision", func(t *testing.T) {
		err := s.GetList(ctx, p, ListOptions{Recursive: true, ResourceVersion: "99999999", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan}, &corev1.ConfigMapList{})
		wantStatus(t, err, http.StatusGatewayTimeout, metav1.StatusReasonTimeout, "")
	})
	t.Run("exact future revision", func(t *testing.T) {
		err := s.GetList(ctx, p, ListOptions{Recursive: true, ResourceVersion: "99999999", ResourceVersionMatch: metav1.ResourceVersionMatchExact}, &corev1.ConfigMapList{})
		wantStatus(t, err, http.StatusGatewayTimeout, metav1.StatusReasonTimeout, "")
	})
	t.Run("legacy paged list reads at the resourceVersion", func(t *testing.T) {
		list := &corev1.ConfigMapList{}
		err := s.GetList(ctx, p, ListOptions{Recursive: true, ResourceVersion: first.ResourceVersion, Predicate: Predicate{Limit: 5}}, list)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 || list.Items[0].Data["v"] != "1" {
			t.Fatalf("got %+v", list.Items)
		}
	})
}

// page lists one page and returns it.
func page(t *testing.T, s *Store, p string, opts ListOptions) *corev1.ConfigMapList {
	t.Helper()
	list := &corev1.ConfigMapList{}
	if err := s.GetList(testCtx(t), p, opts, list); err != nil {
		t.Fatalf("GetList: %v", err)
	}
	return list
}

func TestListPagingPinnedToFirstRevision(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	var want []string
	for i := range 10 {
		n := fmt.Sprintf("cm-%02d", i)
		want = append(want, n)
		mustCreate(t, s, key(p, "ns", n), cm("ns", n, nil, map[string]string{"v": "orig"}))
	}

	first := page(t, s, p, ListOptions{Recursive: true, Predicate: Predicate{Limit: 3}})
	got := podlessNames(first)
	if first.Continue == "" || first.RemainingItemCount == nil {
		t.Fatalf("first page meta %+v", first.ListMeta)
	}
	// From here writers run the whole time the later pages are read.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n := fmt.Sprintf("cm-%02d-new%d", i%10, i)
			_ = s.Create(ctx, key(p, "ns", n), cm("ns", n, nil, nil), nil, 0)
			time.Sleep(time.Millisecond)
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
	}()

	// And some writes certain to land between pages: a new key inside the
	// range still to come, an update and a delete of objects on later pages.
	mustCreate(t, s, key(p, "ns", "cm-05a"), cm("ns", "cm-05a", nil, nil))
	setData(t, s, key(p, "ns", "cm-08"), map[string]string{"v": "changed"})
	if err := s.Delete(ctx, key(p, "ns", "cm-09"), nil, nil, nil); err != nil {
		t.Fatal(err)
	}

	cont := first.Continue
	pages := 1
	for cont != "" {
		l := page(t, s, p, ListOptions{Recursive: true, Predicate: Predicate{Limit: 3, Continue: cont}})
		pages++
		if l.ResourceVersion != first.ResourceVersion {
			t.Fatalf("page %d at RV %s, first at %s", pages, l.ResourceVersion, first.ResourceVersion)
		}
		for _, it := range l.Items {
			if it.Data["v"] != "orig" {
				t.Fatalf("page %d shows a later write: %s %v", pages, it.Name, it.Data)
			}
		}
		got = append(got, podlessNames(l)...)
		cont = l.Continue
	}
	if !slices.Equal(got, want) {
		t.Fatalf("paged list %v, want the first revision's %v", got, want)
	}
	if pages != 4 {
		t.Fatalf("%d pages, want 4", pages)
	}

	t.Run("token has kube's format", func(t *testing.T) {
		raw, err := base64.RawURLEncoding.DecodeString(first.Continue)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`{"v":"meta.k8s.io/v1","rv":%s,"start":"ns/cm-02\u0000"}`, first.ResourceVersion)
		if string(raw) != want {
			t.Fatalf("token %s, want %s", raw, want)
		}
	})
	t.Run("remaining item count", func(t *testing.T) {
		if *first.RemainingItemCount != 7 {
			t.Fatalf("remainingItemCount %d, want 7", *first.RemainingItemCount)
		}
	})
}

func podlessNames(l *corev1.ConfigMapList) []string {
	var out []string
	for _, c := range l.Items {
		out = append(out, c.Name)
	}
	return out
}

func TestListLimitAppliedAfterFiltering(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	// Only every fifth object matches, so one page needs several chunks.
	var want []string
	for i := range 40 {
		n := fmt.Sprintf("c%02d", i)
		l := map[string]string{"keep": strconv.FormatBool(i%5 == 0)}
		if i%5 == 0 {
			want = append(want, n)
		}
		mustCreate(t, s, key(p, "ns", n), cm("ns", n, l, nil))
	}
	sel := labels.SelectorFromSet(labels.Set{"keep": "true"})
	var got []string
	cont := ""
	var rv string
	for {
		l := page(t, s, p, ListOptions{Recursive: true, Predicate: Predicate{Label: sel, Limit: 3, Continue: cont}})
		if len(l.Items) > 3 {
			t.Fatalf("page of %d items, limit 3", len(l.Items))
		}
		if l.Continue != "" && len(l.Items) != 3 {
			t.Fatalf("short page (%d) with more to come", len(l.Items))
		}
		if l.RemainingItemCount != nil {
			t.Fatal("remainingItemCount set for a filtered list")
		}
		if rv == "" {
			rv = l.ResourceVersion
		} else if l.ResourceVersion != rv {
			t.Fatalf("RV moved %s -> %s", rv, l.ResourceVersion)
		}
		got = append(got, podlessNames(l)...)
		if cont = l.Continue; cont == "" {
			break
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestListBadContinue(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	tok := func(v string) string { return base64.RawURLEncoding.EncodeToString([]byte(v)) }
	tests := []struct {
		name  string
		token string
		rv    string
		msg   string
	}{
		{name: "not base64", token: "%%%", msg: "invalid continue token: continue key is not valid: illegal base64 data at input byte 0"},
		{name: "not json", token: tok("nope"), msg: "invalid continue token: continue key is not valid: invalid character 'o' in literal null (expecting 'u')"},
		{name: "unknown version", token: tok(`{"v":"x/v9","rv":5,"start":"a"}`), msg: "invalid continue token: continue key is not valid: server does not recognize this encoded version x/v9"},
		{name: "zero rv", token: tok(`{"v":"meta.k8s.io/v1","rv":0,"start":"a"}`), msg: "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"},
		{name: "empty start", token: tok(`{"v":"meta.k8s.io/v1","rv":5,"start":""}`), msg: "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"},
		{name: "escaping start", token: tok(`{"v":"meta.k8s.io/v1","rv":5,"start":"../secrets/x"}`), msg: "invalid continue token: continue key is not valid: ../secrets/x"},
		{name: "resourceVersion with continue", token: tok(`{"v":"meta.k8s.io/v1","rv":5,"start":"a"}`), rv: "5", msg: "specifying resource version is not allowed when using continue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.GetList(testCtx(t), p, ListOptions{Recursive: true, ResourceVersion: tc.rv, Predicate: Predicate{Limit: 1, Continue: tc.token}}, &corev1.ConfigMapList{})
			wantStatus(t, err, http.StatusBadRequest, metav1.StatusReasonBadRequest, tc.msg)
		})
	}
}

// TestCompaction is not parallel: compacting the shared etcd must not
// race other tests' pinned reads, and parallel tests only start once the
// sequential ones are done.
func TestCompaction(t *testing.T) {
	s, p := newCMStore(t)
	ctx := testCtx(t)
	var firstRV string
	for i := range 5 {
		n := fmt.Sprintf("c%d", i)
		o := mustCreate(t, s, key(p, "ns", n), cm("ns", n, nil, nil)).(*corev1.ConfigMap)
		if i == 0 {
			firstRV = o.ResourceVersion
		}
	}
	pg := page(t, s, p, ListOptions{Recursive: true, Predicate: Predicate{Limit: 2}})
	mustCreate(t, s, key(p, "ns", "c9"), cm("ns", "c9", nil, nil))
	rev, err := s.CurrentRevision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		t.Fatal(err)
	}

	t.Run("continue after compaction", func(t *testing.T) {
		err := s.GetList(ctx, p, ListOptions{Recursive: true, Predicate: Predicate{Limit: 2, Continue: pg.Continue}}, &corev1.ConfigMapList{})
		se := wantStatus(t, err, http.StatusGone, metav1.StatusReasonExpired, inconsistentContinue)
		tokenJSON, _ := base64.RawURLEncoding.DecodeString(se.ErrStatus.ListMeta.Continue)
		var tk continueToken
		if err := json.Unmarshal(tokenJSON, &tk); err != nil || tk.ResourceVersion != -1 || tk.StartKey != "ns/c1\x00" {
			t.Fatalf("inconsistent token %s (%v)", tokenJSON, err)
		}
		// The inconsistent token resumes at the latest revision.
		rest := page(t, s, p, ListOptions{Recursive: true, Predicate: Predicate{Continue: se.ErrStatus.ListMeta.Continue}})
		if got := strings.Join(podlessNames(rest), ","); got != "c2,c3,c4,c9" {
			t.Fatalf("resumed list %s", got)
		}
	})
	t.Run("exact list at a compacted revision", func(t *testing.T) {
		err := s.GetList(ctx, p, ListOptions{Recursive: true, ResourceVersion: firstRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact}, &corev1.ConfigMapList{})
		wantStatus(t, err, http.StatusGone, metav1.StatusReasonExpired, "The resourceVersion for the provided list is too old.")
	})
	t.Run("watch from a compacted revision", func(t *testing.T) {
		w, err := s.Watch(ctx, p, ListOptions{Recursive: true, ResourceVersion: firstRV})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		ev := nextEvent(t, w)
		st, ok := ev.Object.(*metav1.Status)
		if ev.Type != "ERROR" || !ok {
			t.Fatalf("got %s %T, want ERROR with a Status", ev.Type, ev.Object)
		}
		if st.Code != http.StatusGone || st.Reason != metav1.StatusReasonExpired || st.Message != "The resourceVersion for the provided watch is too old." {
			t.Fatalf("status %+v", st)
		}
		expectClosed(t, w)
	})
}
