package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func TestCreateGet(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	k := key(p, "default", "x")
	created := mustCreate(t, s, k, cm("default", "x", nil, map[string]string{"a": "1"})).(*corev1.ConfigMap)

	t.Run("resourceVersion is the mod revision", func(t *testing.T) {
		if got, want := created.ResourceVersion, rvString(modRevision(t, k)); got != want {
			t.Fatalf("created RV %s, mod revision %s", got, want)
		}
		got := &corev1.ConfigMap{}
		if err := s.Get(ctx, k, GetOptions{}, got); err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != created.ResourceVersion || got.Data["a"] != "1" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("stored JSON has kind and no resourceVersion", func(t *testing.T) {
		resp, err := cli.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(resp.Kvs[0].Value, &m); err != nil {
			t.Fatal(err)
		}
		if m["apiVersion"] != "v1" || m["kind"] != "ConfigMap" {
			t.Fatalf("stored apiVersion/kind = %v/%v", m["apiVersion"], m["kind"])
		}
		if _, ok := m["metadata"].(map[string]any)["resourceVersion"]; ok {
			t.Fatalf("resourceVersion stored: %s", resp.Kvs[0].Value)
		}
	})

	tests := []struct {
		name   string
		run    func() error
		code   int32
		reason metav1.StatusReason
		msg    string
	}{
		{
			name:   "already exists",
			run:    func() error { return s.Create(ctx, k, cm("default", "x", nil, nil), nil, 0) },
			code:   http.StatusConflict,
			reason: metav1.StatusReasonAlreadyExists,
			msg:    `configmaps "x" already exists`,
		},
		{
			name:   "not found",
			run:    func() error { return s.Get(ctx, key(p, "default", "nope"), GetOptions{}, &corev1.ConfigMap{}) },
			code:   http.StatusNotFound,
			reason: metav1.StatusReasonNotFound,
			msg:    `configmaps "nope" not found`,
		},
		{
			name: "resourceVersion set on create",
			run: func() error {
				c := cm("default", "y", nil, nil)
				c.ResourceVersion = "5"
				return s.Create(ctx, key(p, "default", "y"), c, nil, 0)
			},
			code:   http.StatusInternalServerError,
			reason: metav1.StatusReasonUnknown,
			msg:    "resourceVersion should not be set on objects to be created",
		},
		{
			name:   "get with a future resourceVersion",
			run:    func() error { return s.Get(ctx, k, GetOptions{ResourceVersion: "999999999"}, &corev1.ConfigMap{}) },
			code:   http.StatusGatewayTimeout,
			reason: metav1.StatusReasonTimeout,
		},
		{
			name:   "get with a bad resourceVersion",
			run:    func() error { return s.Get(ctx, k, GetOptions{ResourceVersion: "abc"}, &corev1.ConfigMap{}) },
			code:   http.StatusBadRequest,
			reason: metav1.StatusReasonBadRequest,
			msg:    `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`,
		},
		{
			name:   "key outside the prefix",
			run:    func() error { return s.Get(ctx, "/registry/secrets/default/x", GetOptions{}, &corev1.ConfigMap{}) },
			code:   http.StatusInternalServerError,
			reason: metav1.StatusReasonInternalError,
		},
		{
			name:   "key with dot-dot",
			run:    func() error { return s.Get(ctx, p+"/default/../../secrets/x", GetOptions{}, &corev1.ConfigMap{}) },
			code:   http.StatusInternalServerError,
			reason: metav1.StatusReasonUnknown,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantStatus(t, tc.run(), tc.code, tc.reason, tc.msg)
		})
	}

	t.Run("too large resourceVersion has kube's cause", func(t *testing.T) {
		err := s.Get(ctx, k, GetOptions{ResourceVersion: "999999999"}, &corev1.ConfigMap{})
		if !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
			t.Fatalf("got %v, want a ResourceVersionTooLarge cause", err)
		}
	})
	t.Run("get with an older resourceVersion reads the current object", func(t *testing.T) {
		got := &corev1.ConfigMap{}
		if err := s.Get(ctx, k, GetOptions{ResourceVersion: "1"}, got); err != nil {
			t.Fatal(err)
		}
		if got.ResourceVersion != created.ResourceVersion {
			t.Fatalf("RV %s, want %s", got.ResourceVersion, created.ResourceVersion)
		}
	})
	t.Run("ignoreNotFound gives a zero object", func(t *testing.T) {
		got := &corev1.ConfigMap{Data: map[string]string{"stale": "x"}}
		if err := s.Get(ctx, key(p, "default", "nope"), GetOptions{IgnoreNotFound: true}, got); err != nil {
			t.Fatal(err)
		}
		if got.Name != "" || got.Data != nil {
			t.Fatalf("got %+v, want zero", got)
		}
	})
	t.Run("create leaves the input object alone", func(t *testing.T) {
		in := cm("default", "z", nil, nil)
		in.SelfLink = "/api/v1/x"
		if err := s.Create(ctx, key(p, "default", "z"), in, nil, 0); err != nil {
			t.Fatal(err)
		}
		if in.SelfLink != "/api/v1/x" || in.ResourceVersion != "" {
			t.Fatalf("input changed: %+v", in.ObjectMeta)
		}
	})
}

func TestGuaranteedUpdate(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)

	setKey := func(c *corev1.ConfigMap, v string) UpdateFunc {
		return func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
			o := in.(*corev1.ConfigMap)
			o.Data = map[string]string{"k": v}
			return o, nil, nil
		}
	}

	t.Run("stale resourceVersion precondition", func(t *testing.T) {
		k := key(p, "default", "stale")
		old := mustCreate(t, s, k, cm("default", "stale", nil, nil)).(*corev1.ConfigMap)
		setData(t, s, k, map[string]string{"k": "1"})
		err := s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, &Preconditions{ResourceVersion: &old.ResourceVersion}, setKey(nil, "2"))
		wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict,
			`Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again`)
	})
	t.Run("uid precondition", func(t *testing.T) {
		k := key(p, "default", "uid")
		mustCreate(t, s, k, cm("default", "uid", nil, nil))
		other := types.UID("other")
		err := s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, &Preconditions{UID: &other}, setKey(nil, "2"))
		se := wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict, "")
		if want := "Precondition failed: UID in precondition: other, UID in object meta: uid-uid"; !strings.Contains(se.ErrStatus.Message, want) {
			t.Fatalf("message %q lacks %q", se.ErrStatus.Message, want)
		}
	})
	t.Run("matching preconditions", func(t *testing.T) {
		k := key(p, "default", "match")
		c := mustCreate(t, s, k, cm("default", "match", nil, nil)).(*corev1.ConfigMap)
		out := &corev1.ConfigMap{}
		if err := s.GuaranteedUpdate(ctx, k, out, false, &Preconditions{UID: &c.UID, ResourceVersion: &c.ResourceVersion}, setKey(nil, "2")); err != nil {
			t.Fatal(err)
		}
		if out.Data["k"] != "2" || out.ResourceVersion == c.ResourceVersion || out.ResourceVersion != rvString(modRevision(t, k)) {
			t.Fatalf("got %+v", out)
		}
	})
	t.Run("no-op update keeps the resourceVersion", func(t *testing.T) {
		k := key(p, "default", "noop")
		c := mustCreate(t, s, k, cm("default", "noop", nil, map[string]string{"k": "1"})).(*corev1.ConfigMap)
		out := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, k, out, false, nil, func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
			return in, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if out.ResourceVersion != c.ResourceVersion || rvString(modRevision(t, k)) != c.ResourceVersion {
			t.Fatalf("RV moved: %s -> %s (etcd %d)", c.ResourceVersion, out.ResourceVersion, modRevision(t, k))
		}
	})
	t.Run("not found", func(t *testing.T) {
		err := s.GuaranteedUpdate(ctx, key(p, "default", "absent"), &corev1.ConfigMap{}, false, nil, setKey(nil, "1"))
		wantStatus(t, err, http.StatusNotFound, metav1.StatusReasonNotFound, `configmaps "absent" not found`)
	})
	t.Run("ignoreNotFound creates from a zero object", func(t *testing.T) {
		k := key(p, "default", "upsert")
		out := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, k, out, true, nil, func(in runtime.Object, res ResponseMeta) (runtime.Object, *time.Duration, error) {
			o := in.(*corev1.ConfigMap)
			if o.Name != "" || res.ResourceVersion != 0 {
				return nil, nil, fmt.Errorf("want a zero object, got %+v rv %d", o, res.ResourceVersion)
			}
			o.Namespace, o.Name = "default", "upsert"
			return o, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if out.Name != "upsert" || out.ResourceVersion != rvString(modRevision(t, k)) {
			t.Fatalf("got %+v", out)
		}
	})
	t.Run("tryUpdate error is returned as is", func(t *testing.T) {
		k := key(p, "default", "refuse")
		mustCreate(t, s, k, cm("default", "refuse", nil, nil))
		want := apierrors.NewForbidden(configMaps, "refuse", errors.New("no"))
		err := s.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, nil, func(runtime.Object, ResponseMeta) (runtime.Object, *time.Duration, error) {
			return nil, nil, want
		})
		if err != want {
			t.Fatalf("got %v, want %v", err, want)
		}
	})
	t.Run("conflict retries with the new object", func(t *testing.T) {
		k := key(p, "default", "retry")
		mustCreate(t, s, k, cm("default", "retry", nil, map[string]string{"k": "0"}))
		calls := 0
		out := &corev1.ConfigMap{}
		err := s.GuaranteedUpdate(ctx, k, out, false, nil, func(in runtime.Object, res ResponseMeta) (runtime.Object, *time.Duration, error) {
			calls++
			o := in.(*corev1.ConfigMap)
			if calls == 1 {
				// Someone else writes between our read and our write.
				setData(t, s, k, map[string]string{"k": "theirs"})
			} else if o.Data["k"] != "theirs" || strconv.FormatUint(res.ResourceVersion, 10) != o.ResourceVersion {
				return nil, nil, fmt.Errorf("retry saw %v at %d", o.Data, res.ResourceVersion)
			}
			o.Data = map[string]string{"k": o.Data["k"] + "+mine"}
			return o, nil, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if calls != 2 || out.Data["k"] != "theirs+mine" {
			t.Fatalf("calls %d, data %v", calls, out.Data)
		}
	})
	t.Run("bounded retries end in Conflict", func(t *testing.T) {
		s1, p1 := newCMStore(t, WithMaxUpdateRetries(1))
		k := key(p1, "default", "busy")
		mustCreate(t, s1, k, cm("default", "busy", nil, nil))
		n := 0
		err := s1.GuaranteedUpdate(ctx, k, &corev1.ConfigMap{}, false, nil, func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
			n++
			setData(t, s1, k, map[string]string{"n": fmt.Sprint(n)})
			o := in.(*corev1.ConfigMap)
			o.Data = map[string]string{"mine": "1"}
			return o, nil, nil
		})
		wantStatus(t, err, http.StatusConflict, metav1.StatusReasonConflict, "")
	})
}

func TestGuaranteedUpdateConcurrentIncrements(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	k := key(p, "default", "counter")
	mustCreate(t, s, k, cm("default", "counter", nil, map[string]string{"n": "0"}))

	const workers, perWorker = 20, 5
	var wg sync.WaitGroup
	errs := make(chan error, workers*perWorker)
	rvs := make(chan string, workers*perWorker)
	for range workers {
		wg.Go(func() {
			for range perWorker {
				out := &corev1.ConfigMap{}
				err := s.GuaranteedUpdate(ctx, k, out, false, nil, func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
					o := in.(*corev1.ConfigMap)
					n, err := strconv.Atoi(o.Data["n"])
					if err != nil {
						return nil, nil, err
					}
					o.Data["n"] = strconv.Itoa(n + 1)
					return o, nil, nil
				})
				if err != nil {
					errs <- err
					continue
				}
				rvs <- out.ResourceVersion
			}
		})
	}
	wg.Wait()
	close(errs)
	close(rvs)
	for err := range errs {
		t.Errorf("increment failed: %v", err)
	}
	seen := map[string]bool{}
	for rv := range rvs {
		if seen[rv] {
			t.Errorf("two increments returned RV %s", rv)
		}
		seen[rv] = true
	}
	got := &corev1.ConfigMap{}
	if err := s.Get(ctx, k, GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Data["n"] != strconv.Itoa(workers*perWorker) {
		t.Fatalf("counter = %s, want %d (lost updates)", got.Data["n"], workers*perWorker)
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	wrongUID := types.UID("wrong")
	staleRV := "1"

	tests := []struct {
		name     string
		pre      *Preconditions
		validate ValidateDeleteFunc
		code     int32
		reason   metav1.StatusReason
		contains string
	}{
		{name: "plain"},
		{
			name: "matching preconditions",
			pre:  &Preconditions{UID: ptr(types.UID("uid-matching preconditions"))},
		},
		{
			name:     "uid precondition",
			pre:      &Preconditions{UID: &wrongUID},
			code:     http.StatusConflict,
			reason:   metav1.StatusReasonConflict,
			contains: "Precondition failed: UID in precondition: wrong, UID in object meta: uid-uid precondition",
		},
		{
			name:     "stale resourceVersion precondition",
			pre:      &Preconditions{ResourceVersion: &staleRV},
			code:     http.StatusConflict,
			reason:   metav1.StatusReasonConflict,
			contains: "Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ",
		},
		{
			name: "validation refuses",
			validate: func(context.Context, runtime.Object) error {
				return apierrors.NewForbidden(configMaps, "x", errors.New("protected"))
			},
			code:     http.StatusForbidden,
			reason:   metav1.StatusReasonForbidden,
			contains: "protected",
		},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.name
			k := key(p, "default", fmt.Sprintf("d%d", i))
			c := mustCreate(t, s, k, cm("default", name, nil, map[string]string{"k": "v"})).(*corev1.ConfigMap)
			out := &corev1.ConfigMap{}
			err := s.Delete(ctx, k, out, tc.pre, tc.validate)
			if tc.code != 0 {
				se := wantStatus(t, err, tc.code, tc.reason, "")
				if !strings.Contains(se.ErrStatus.Message, tc.contains) {
					t.Fatalf("message %q lacks %q", se.ErrStatus.Message, tc.contains)
				}
				if modRevision(t, k) == 0 {
					t.Fatal("object deleted despite the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if modRevision(t, k) != 0 {
				t.Fatal("object still in etcd")
			}
			if out.Data["k"] != "v" || out.Name != c.Name {
				t.Fatalf("deleted object %+v", out)
			}
			rv, _ := strconv.ParseInt(out.ResourceVersion, 10, 64)
			crv, _ := strconv.ParseInt(c.ResourceVersion, 10, 64)
			if rv <= crv {
				t.Fatalf("deleted object RV %d, want the delete's revision > %d", rv, crv)
			}
		})
	}

	t.Run("not found", func(t *testing.T) {
		err := s.Delete(ctx, key(p, "default", "absent"), &corev1.ConfigMap{}, nil, nil)
		wantStatus(t, err, http.StatusNotFound, metav1.StatusReasonNotFound, `configmaps "absent" not found`)
	})
	t.Run("conflict retries and revalidates", func(t *testing.T) {
		k := key(p, "default", "moving")
		mustCreate(t, s, k, cm("default", "moving", nil, map[string]string{"v": "0"}))
		var seen []string
		out := &corev1.ConfigMap{}
		err := s.Delete(ctx, k, out, nil, func(_ context.Context, obj runtime.Object) error {
			c := obj.(*corev1.ConfigMap)
			seen = append(seen, c.Data["v"])
			if len(seen) == 1 {
				setData(t, s, k, map[string]string{"v": "1"})
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(seen, ",") != "0,1" || out.Data["v"] != "1" {
			t.Fatalf("validate saw %v, deleted %v", seen, out.Data)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestTTL(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	ctx := testCtx(t)
	lease := func(k string) clientv3.LeaseID {
		t.Helper()
		resp, err := cli.Get(ctx, k)
		if err != nil || len(resp.Kvs) == 0 {
			t.Fatalf("get %s: %v", k, err)
		}
		return clientv3.LeaseID(resp.Kvs[0].Lease)
	}

	k1, k2 := key(p, "default", "e1"), key(p, "default", "e2")
	if err := s.Create(ctx, k1, cm("default", "e1", nil, nil), nil, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, k2, cm("default", "e2", nil, nil), nil, 30*time.Second); err != nil {
		t.Fatal(err)
	}

	t.Run("lease attached with the ttl", func(t *testing.T) {
		id := lease(k1)
		if id == 0 {
			t.Fatal("no lease attached")
		}
		ttl, err := cli.TimeToLive(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if ttl.TTL < 25 || ttl.TTL > 31 || ttl.GrantedTTL < 30 {
			t.Fatalf("lease TTL %d (granted %d), want about 30s", ttl.TTL, ttl.GrantedTTL)
		}
	})
	t.Run("lease reused for the same ttl", func(t *testing.T) {
		if lease(k1) != lease(k2) {
			t.Fatal("second write granted its own lease")
		}
	})
	t.Run("update with a ttl keeps a lease, without drops it", func(t *testing.T) {
		ttl := 30 * time.Second
		err := s.GuaranteedUpdate(ctx, k1, &corev1.ConfigMap{}, false, nil, func(in runtime.Object, _ ResponseMeta) (runtime.Object, *time.Duration, error) {
			o := in.(*corev1.ConfigMap)
			o.Data = map[string]string{"n": "1"}
			return o, &ttl, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if lease(k1) == 0 {
			t.Fatal("update with ttl lost the lease")
		}
		setData(t, s, k1, map[string]string{"n": "2"})
		if lease(k1) != 0 {
			t.Fatal("update without ttl kept the lease (kube drops it)")
		}
	})
}

func TestCountAndObjectMetrics(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s, p := newCMStore(t, WithRegisterer(reg))
	// A second store on the same registry must share, not panic.
	s2, p2 := newPodStore(t, WithRegisterer(reg))
	ctx := testCtx(t)
	for i := range 3 {
		mustCreate(t, s, key(p, "ns", fmt.Sprint(i)), cm("ns", fmt.Sprint(i), nil, nil))
	}
	mustCreate(t, s2, key(p2, "ns", "p"), pod("ns", "p", "", nil))

	t.Run("count", func(t *testing.T) {
		for _, tc := range []struct {
			key  string
			want int64
		}{{p, 3}, {p + "/ns", 3}, {p + "/other", 0}} {
			n, err := s.Count(ctx, tc.key)
			if err != nil || n != tc.want {
				t.Fatalf("Count(%s) = %d, %v; want %d", tc.key, n, err, tc.want)
			}
		}
	})
	t.Run("apiserver_storage_objects", func(t *testing.T) {
		if _, err := s.UpdateObjectCount(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s2.UpdateObjectCount(ctx); err != nil {
			t.Fatal(err)
		}
		if v := gaugeValue(t, reg, "apiserver_storage_objects", map[string]string{"resource": "configmaps"}); v != 3 {
			t.Fatalf("configmaps gauge %v, want 3", v)
		}
		if v := gaugeValue(t, reg, "apiserver_storage_objects", map[string]string{"resource": "pods"}); v != 1 {
			t.Fatalf("pods gauge %v, want 1", v)
		}
	})
	t.Run("etcd_request_duration_seconds", func(t *testing.T) {
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, mf := range mfs {
			if mf.GetName() != "etcd_request_duration_seconds" {
				continue
			}
			for _, m := range mf.GetMetric() {
				l := labelMap(m)
				if l["operation"] == "create" && l["resource"] == "configmaps" && l["group"] == "" {
					found = m.GetHistogram().GetSampleCount() == 3 && len(m.GetHistogram().GetBucket()) == 23
				}
			}
		}
		if !found {
			t.Fatal("no create histogram with 3 samples in kube's 23 buckets")
		}
	})
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func gaugeValue(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			l := labelMap(m)
			for k, v := range want {
				if l[k] != v {
					continue next
				}
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s%v", name, want)
	return 0
}

func TestUnreachableEtcd(t *testing.T) {
	t.Parallel()
	// A port that was free a moment ago: nothing answers there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dead, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()

	newDead := func(opts ...Option) *Store {
		return New(dead, codec(), func() runtime.Object { return &corev1.ConfigMap{} },
			func() runtime.Object { return &corev1.ConfigMapList{} }, "/registry/configmaps", configMaps, opts...)
	}
	k := "/registry/configmaps/default/x"
	tests := []struct {
		name string
		s    *Store
		ctx  func() (context.Context, context.CancelFunc)
		op   func(context.Context, *Store) error
	}{
		{
			name: "get honours the ctx deadline",
			s:    newDead(),
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 300*time.Millisecond)
			},
			op: func(ctx context.Context, s *Store) error { return s.Get(ctx, k, GetOptions{}, &corev1.ConfigMap{}) },
		},
		{
			name: "create under the request timeout",
			s:    newDead(WithRequestTimeout(300 * time.Millisecond)),
			ctx:  func() (context.Context, context.CancelFunc) { return context.Background(), func() {} },
			op: func(ctx context.Context, s *Store) error {
				return s.Create(ctx, k, cm("default", "x", nil, nil), nil, 0)
			},
		},
		{
			name: "list under the request timeout",
			s:    newDead(WithRequestTimeout(300 * time.Millisecond)),
			ctx:  func() (context.Context, context.CancelFunc) { return context.Background(), func() {} },
			op: func(ctx context.Context, s *Store) error {
				return s.GetList(ctx, "/registry/configmaps", ListOptions{Recursive: true}, &corev1.ConfigMapList{})
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			start := time.Now()
			err := tc.op(ctx, tc.s)
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("took %v", took)
			}
			if !apierrors.IsTimeout(err) && !apierrors.IsServerTimeout(err) {
				t.Fatalf("got %v, want a timeout API error", err)
			}
		})
	}
}

func TestRequestTooLarge(t *testing.T) {
	t.Parallel()
	s, p := newCMStore(t)
	tests := []struct {
		name string
		size int
	}{
		{"over etcd's request limit", 1600 << 10},
		{"over the client's send limit", 3 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			big := cm("ns", "big", nil, map[string]string{"x": strings.Repeat("a", tc.size)})
			err := s.Create(testCtx(t), key(p, "ns", "big"), big, nil, 0)
			wantStatus(t, err, http.StatusInternalServerError, metav1.StatusReasonUnknown, "etcdserver: request is too large")
			if !IsRequestTooLarge(err) {
				t.Fatal("IsRequestTooLarge = false")
			}
		})
	}
}
