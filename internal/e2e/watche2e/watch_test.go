package watche2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// nextEvent waits a few seconds for the next event of w.
func nextEvent(t *testing.T, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch closed early")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no watch event within 5s")
	}
	return watch.Event{}
}

// wantEvent checks the next event's type and ConfigMap name.
func wantEvent(t *testing.T, w watch.Interface, typ watch.EventType, name string) *corev1.ConfigMap {
	t.Helper()
	ev := nextEvent(t, w)
	// A bookmark may come at any time (kube's contract): it is never the
	// event a test waits for by name.
	for ev.Type == watch.Bookmark && typ != watch.Bookmark {
		ev = nextEvent(t, w)
	}
	cm, ok := ev.Object.(*corev1.ConfigMap)
	if ev.Type != typ || !ok || cm.Name != name {
		t.Fatalf("got %s %#v, want %s of configmap %q", ev.Type, ev.Object, typ, name)
	}
	return cm
}

// wantClosed waits for w's channel to close.
func wantClosed(t *testing.T, w watch.Interface, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case _, ok := <-w.ResultChan():
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("watch still open after %v", within)
		}
	}
}

// rawWatch opens a watch with the admin HTTP client; it ends with ctx.
func rawWatch(ctx context.Context, t *testing.T, c *http.Client, url, accept string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, bufio.NewReader(resp.Body)
}

type rawEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// readLine reads one newline-framed event.
func readLine(t *testing.T, br *bufio.Reader) rawEvent {
	t.Helper()
	line, err := br.ReadBytes('\n')
	if err != nil {
		t.Fatalf("reading the stream: %v (read %q)", err, line)
	}
	var ev rawEvent
	if err := json.Unmarshal(line, &ev); err != nil {
		t.Fatalf("event %q: %v", line, err)
	}
	return ev
}

func TestWatch(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()

	t.Run("from a revision, exclusive, in order", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-rev")
		cms := cs.CoreV1().ConfigMaps("w-rev")
		a, err := cms.Create(ctx, e2eutil.ConfigMap("a", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		a.Data["k"] = "w"
		a, err = cms.Update(ctx, a, metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cms.Create(ctx, e2eutil.ConfigMap("b", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if got := wantEvent(t, w, watch.Modified, "a"); got.Data["k"] != "w" || got.ResourceVersion != a.ResourceVersion {
			t.Errorf("MODIFIED carries %v at %s, want k=w at %s", got.Data, got.ResourceVersion, a.ResourceVersion)
		}
		wantEvent(t, w, watch.Added, "b")
		wantEvent(t, w, watch.Deleted, "a")
	})

	t.Run("from 0 and from empty start with ADDED", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-zero")
		cms := cs.CoreV1().ConfigMaps("w-zero")
		for _, n := range []string{"a", "b"} {
			if _, err := cms.Create(ctx, e2eutil.ConfigMap(n, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		for _, rv := range []string{"0", ""} {
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
			if err != nil {
				t.Fatal(err)
			}
			wantEvent(t, w, watch.Added, "a")
			wantEvent(t, w, watch.Added, "b")
			if _, err := cms.Create(ctx, e2eutil.ConfigMap("c"+rv, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			wantEvent(t, w, watch.Added, "c"+rv)
			w.Stop()
			if err := cms.Delete(ctx, "c"+rv, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("sendInitialEvents ends with the initial-events-end bookmark", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-init")
		cms := cs.CoreV1().ConfigMaps("w-init")
		created, err := cms.Create(ctx, e2eutil.ConfigMap("a", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{
			SendInitialEvents:    ptr.To(true),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
			AllowWatchBookmarks:  true,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		wantEvent(t, w, watch.Added, "a")
		ev := nextEvent(t, w)
		bm, ok := ev.Object.(*corev1.ConfigMap)
		if ev.Type != watch.Bookmark || !ok || bm.Annotations[metav1.InitialEventsAnnotationKey] != "true" || bm.Name != "" {
			t.Fatalf("got %s %#v, want the initial-events-end bookmark", ev.Type, ev.Object)
		}
		if rv, _ := strconv.Atoi(bm.ResourceVersion); rv < mustAtoi(t, created.ResourceVersion) {
			t.Errorf("bookmark at %s, before the object at %s", bm.ResourceVersion, created.ResourceVersion)
		}
	})

	// Bookmarks from etcd's progress notifications: testPeriodicBookmarks
	// (at most one per interval, kube's cadence; a progress request made
	// for a consistent read is no bookmark of its own).

	t.Run("watch options are validated as kube does", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-opts")
		cms := cs.CoreV1().ConfigMaps("w-opts")
		_, err := cms.Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr.To(true), AllowWatchBookmarks: true})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`)
		_, err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "1", ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided`)
		_, err = cms.Watch(ctx, metav1.ListOptions{LabelSelector: "a in (", ResourceVersion: "1"})
		e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "")
		_, err = cms.Watch(ctx, metav1.ListOptions{FieldSelector: "spec.bogus=1"})
		e2eutil.WantStatus(t, err, 400, metav1.StatusReasonBadRequest, "field label not supported: spec.bogus")
		_, err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: "abc"})
		e2eutil.WantStatus(t, err, 422, metav1.StatusReasonInvalid, "")
	})

	t.Run("selector transitions", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-sel")
		cms := cs.CoreV1().ConfigMaps("w-sel")
		x, err := cms.Create(ctx, e2eutil.ConfigMap("x", map[string]string{"app": "b"}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{LabelSelector: "app=a", ResourceVersion: x.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		relabel := func(app string) {
			x.Labels["app"] = app
			if x, err = cms.Update(ctx, x, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		relabel("a")
		wantEvent(t, w, watch.Added, "x")
		x.Data["k"] = "2"
		relabel("a")
		wantEvent(t, w, watch.Modified, "x")
		relabel("b")
		if got := wantEvent(t, w, watch.Deleted, "x"); got.Labels["app"] != "a" {
			t.Errorf("DELETED carries labels %v, want the last matching state", got.Labels)
		}
		relabel("c") // no event: it matched neither before nor after
		if _, err := cms.Create(ctx, e2eutil.ConfigMap("y", map[string]string{"app": "a"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		wantEvent(t, w, watch.Added, "y")
	})

	t.Run("one object by field selector and by the legacy path", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-one")
		cms := cs.CoreV1().ConfigMaps("w-one")
		a, err := cms.Create(ctx, e2eutil.ConfigMap("a", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b", ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		// All namespaces, by name: the predicate picks it out.
		wall, err := cs.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=b", ResourceVersion: a.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer wall.Stop()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		resp, br := rawWatch(rctx, t, ts.HTTPClient(t), ts.URL()+"/api/v1/watch/namespaces/w-one/configmaps/b?resourceVersion="+a.ResourceVersion, "")
		if resp.StatusCode != 200 {
			t.Fatalf("legacy watch: %d", resp.StatusCode)
		}
		for _, n := range []string{"c", "b"} {
			if _, err := cms.Create(ctx, e2eutil.ConfigMap(n, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		wantEvent(t, w, watch.Added, "b")
		wantEvent(t, wall, watch.Added, "b")
		ev := readLine(t, br)
		e2eutil.MustContain(t, "legacy watch event", string(ev.Object), `"name":"b"`)
		if ev.Type != "ADDED" {
			t.Errorf("legacy watch: got %s", ev.Type)
		}
		code, body := rawGet(t, ts.HTTPClient(t), ts.URL()+"/api/v1/watch/namespaces/w-one/configmaps/b?fieldSelector=metadata.name%3Dc", "application/json")
		if code != 400 || !strings.Contains(body, "fieldSelector metadata.name doesn't match requested name") {
			t.Errorf("legacy watch with another name selected: %d %s", code, body)
		}
	})

	t.Run("JSON stream framing over HTTP/1.1", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-raw")
		cms := cs.CoreV1().ConfigMaps("w-raw")
		a, err := cms.Create(ctx, e2eutil.ConfigMap("a", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := rest.CopyConfig(ts.Config)
		cfg.NextProtos = []string{"http/1.1"}
		c, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		resp, br := rawWatch(rctx, t, c, ts.URL()+"/api/v1/namespaces/w-raw/configmaps?watch=true&resourceVersion="+a.ResourceVersion, "application/json")
		if resp.ProtoMajor != 1 || resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("got %s %d, Content-Type %q, Transfer-Encoding %v", resp.Proto, resp.StatusCode, resp.Header.Get("Content-Type"), resp.TransferEncoding)
		}
		if _, err := cms.Create(ctx, e2eutil.ConfigMap("b", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(line, `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"b","namespace":"w-raw"`) {
			t.Errorf("event line: %s", line)
		}
	})

	t.Run("protobuf stream", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-pb")
		cfg := rest.CopyConfig(ts.Config)
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf"
		cms := kubernetes.NewForConfigOrDie(cfg).CoreV1().ConfigMaps("w-pb")
		w, err := cms.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		for _, n := range []string{"a", "b"} {
			if _, err := cms.Create(ctx, e2eutil.ConfigMap(n, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := wantEvent(t, w, watch.Added, n); got.Data["k"] != "v" {
				t.Errorf("protobuf event data: %v", got.Data)
			}
		}
	})

	t.Run("Table rows", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-table")
		cms := cs.CoreV1().ConfigMaps("w-table")
		a, err := cms.Create(ctx, e2eutil.ConfigMap("a", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		resp, br := rawWatch(rctx, t, ts.HTTPClient(t), ts.URL()+"/api/v1/namespaces/w-table/configmaps?watch=true&resourceVersion="+a.ResourceVersion,
			"application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
		if resp.StatusCode != 200 {
			t.Fatalf("table watch: %d", resp.StatusCode)
		}
		if _, err := cms.Create(ctx, e2eutil.ConfigMap("b", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		for i, want := range []struct{ typ, name string }{{"ADDED", "b"}, {"DELETED", "a"}} {
			ev := readLine(t, br)
			var tbl metav1.Table
			if err := json.Unmarshal(ev.Object, &tbl); err != nil {
				t.Fatal(err)
			}
			if ev.Type != want.typ || tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" || len(tbl.Rows) != 1 || tbl.Rows[0].Cells[0] != want.name {
				t.Fatalf("event %d: %s %s", i, ev.Type, ev.Object)
			}
			if heads := len(tbl.ColumnDefinitions) > 0; heads != (i == 0) {
				t.Errorf("event %d: column definitions %v, want them on the first event only", i, tbl.ColumnDefinitions)
			}
			e2eutil.MustContain(t, "row object", string(tbl.Rows[0].Object.Raw), `"kind":"PartialObjectMetadata"`)
		}
		if code, body := rawGet(t, ts.HTTPClient(t), ts.URL()+"/api/v1/namespaces/w-table/configmaps?watch=true&includeObject=Bogus", "application/json;as=Table;v=v1;g=meta.k8s.io"); code != 400 {
			t.Errorf("bad includeObject: %d %s", code, body)
		}
		if code, body := rawGet(t, ts.HTTPClient(t), ts.URL()+"/api/v1/namespaces/w-table/configmaps?watch=true", "application/yaml"); code != 406 {
			t.Errorf("yaml watch: %d %s", code, body)
		}
	})

	t.Run("1000 writes in order", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-many")
		cms := cs.CoreV1().ConfigMaps("w-many")
		start, err := cms.Create(ctx, e2eutil.ConfigMap("start", nil), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		// The writes go straight to etcd, as another replica's would:
		// through the API they would take most of the test's time.
		cli := ts.Backend().Client
		prefix := ts.Settings().Storage.Prefix + "/configmaps/w-many/"
		wctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		const writers, each = 10, 100
		for g := range writers {
			wg.Go(func() {
				for i := range each {
					name := fmt.Sprintf("cm-%d-%d", g, i)
					obj := e2eutil.ConfigMap(name, nil)
					obj.Namespace, obj.UID = "w-many", types.UID(name)
					obj.APIVersion, obj.Kind = "v1", "ConfigMap"
					b, _ := json.Marshal(obj)
					if _, err := cli.Put(wctx, prefix+name, string(b)); err != nil {
						if wctx.Err() == nil {
							t.Errorf("put: %v", err)
						}
						return
					}
				}
			})
		}
		// Every write arrives once, in revision order, and each writer's
		// in the order it wrote them.
		last := mustAtoi(t, start.ResourceVersion)
		next := map[int]int{}
		for range writers * each {
			ev := nextEvent(t, w)
			got, ok := ev.Object.(*corev1.ConfigMap)
			if ev.Type != watch.Added || !ok {
				t.Fatalf("got %s %T", ev.Type, ev.Object)
			}
			rv := mustAtoi(t, got.ResourceVersion)
			if rv <= last {
				t.Fatalf("%s at %d after %d", got.Name, rv, last)
			}
			last = rv
			var g, i int
			if _, err := fmt.Sscanf(got.Name, "cm-%d-%d", &g, &i); err != nil || i != next[g] {
				t.Fatalf("got %s, want cm-%d-%d", got.Name, g, next[g])
			}
			next[g]++
		}
	})

	t.Run("timeoutSeconds ends the stream", func(t *testing.T) {
		e2eutil.Namespace(t, cs, "w-timeout")
		start := time.Now()
		w, err := cs.CoreV1().ConfigMaps("w-timeout").Watch(ctx, metav1.ListOptions{TimeoutSeconds: ptr.To[int64](1)})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		wantClosed(t, w, 5*time.Second)
		if d := time.Since(start); d < 900*time.Millisecond {
			t.Errorf("closed after %v, before timeoutSeconds", d)
		}
	})
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}

// rawGet makes one GET with an Accept header and returns code and body.
func rawGet(t *testing.T, c *http.Client, url, accept string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", accept)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestWatchCompacted(t *testing.T) {
	// Its own etcd: compacting the shared one would touch other tests.
	// ConfigMaps read etcd here: the watch cache, like kube's, serves any
	// revision still in its window, compacted in etcd or not.
	ts := testserver.Start(t, testserver.Options{OwnEtcd: true, Configure: func(c *config.Config) {
		c.Storage.WatchCache.Disabled = []string{"configmaps"}
	}})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "w-compact")
	cms := cs.CoreV1().ConfigMaps("w-compact")
	x, err := cms.Create(ctx, e2eutil.ConfigMap("x", nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	old := x.ResourceVersion
	for i := range 3 {
		x.Data["k"] = strconv.Itoa(i)
		if x, err = cms.Update(ctx, x, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ts.Backend().Client.Compact(ctx, int64(mustAtoi(t, x.ResourceVersion))); err != nil {
		t.Fatal(err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: old})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("got %s %#v, want an ERROR event with 410 Expired", ev.Type, ev.Object)
	}
	wantClosed(t, w, 5*time.Second)
}

func TestWatchEndsAtShutdown(t *testing.T) {
	ts := testserver.Start(t, testserver.Options{})
	cs := kubernetes.NewForConfigOrDie(ts.Config)
	w, err := cs.CoreV1().ConfigMaps("default").Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	start := time.Now()
	if err := ts.Shutdown(); err != nil {
		t.Fatalf("shutdown with a watch open: %v", err)
	}
	// The shutdown timeout is 10s: a watch holding the drain would show.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with a watch open", d)
	}
	wantClosed(t, w, 5*time.Second)
}

// startKubectl runs kubectl in the background and hands back its output
// (stdout and stderr) line by line; the channel closes when it exits.
func startKubectl(ctx context.Context, t *testing.T, ts *testserver.TestServer, args ...string) (<-chan string, func() error) {
	t.Helper()
	path, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not on PATH; this test needs the real kubectl")
	}
	cmd := exec.CommandContext(ctx, path, append([]string{"--kubeconfig", ts.Kubeconfig}, args...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		pw.Close()
		done <- err
	}()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, func() error { return <-done }
}

// waitLine reads lines until one satisfies ok, and returns what it read.
func waitLine(ctx context.Context, t *testing.T, lines <-chan string, what string, ok func(string) bool) string {
	t.Helper()
	var seen strings.Builder
	for {
		select {
		case l, open := <-lines:
			if !open {
				t.Fatalf("kubectl ended before %s:\n%s", what, seen.String())
			}
			seen.WriteString(l + "\n")
			if ok(l) {
				return seen.String()
			}
		case <-ctx.Done():
			t.Fatalf("no %s from kubectl:\n%s", what, seen.String())
		}
	}
}

func TestWatchKubectl(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	e2eutil.Namespace(t, cs, "w-kubectl")
	cms := cs.CoreV1().ConfigMaps("w-kubectl")
	x := e2eutil.ConfigMap("x", nil)
	x.Finalizers = []string{"example.com/hold"}
	x, err := cms.Create(ctx, x, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("get -w prints events", func(t *testing.T) {
		kctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		lines, wait := startKubectl(kctx, t, ts, "get", "configmaps", "-n", "w-kubectl", "-w", "--output-watch-events")
		defer func() { cancel(); wait() }()
		event := func(typ string) func(string) bool {
			return func(l string) bool {
				f := strings.Fields(l)
				return len(f) >= 2 && f[0] == typ && f[1] == "x"
			}
		}
		waitLine(kctx, t, lines, "an ADDED line", event("ADDED"))
		x.Data["k"] = "w"
		if _, err := cms.Update(ctx, x, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitLine(kctx, t, lines, "a MODIFIED line", event("MODIFIED"))
	})

	t.Run("delete waits with a watch", func(t *testing.T) {
		// The finalizer keeps x after the DELETE, so kubectl watches it by
		// name until it goes: when an update removes the finalizer.
		kctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		lines, wait := startKubectl(kctx, t, ts, "delete", "configmap", "x", "-n", "w-kubectl", "-v=6")
		out := waitLine(kctx, t, lines, "the watch", func(l string) bool {
			return strings.Contains(l, "watch=true") && strings.Contains(l, "fieldSelector=metadata.name%3Dx")
		})
		held, err := cms.Get(ctx, "x", metav1.GetOptions{})
		if err != nil || held.DeletionTimestamp == nil {
			t.Fatalf("x while kubectl waits: %v %+v", err, held)
		}
		held.Finalizers = nil
		if _, err := cms.Update(ctx, held, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		for l := range lines {
			out += l + "\n"
		}
		if err := wait(); err != nil {
			t.Fatalf("kubectl delete: %v\n%s", err, out)
		}
		e2eutil.MustContain(t, "kubectl delete", out, `configmap "x" deleted`)
	})
}
