package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// clientTimeout bounds every request the load makes: a request that takes
// longer is a hang, and the tests count it as one.
const clientTimeout = 20 * time.Second

// outcome is what one request got.
type outcome struct {
	code int    // 0 when no HTTP response came back
	body string // the Status for an error
	err  error  // transport error or client timeout
}

// load creates ConfigMaps named <prefix>-<worker>-<n> from several workers
// until stopped, and records what each create got. A create that failed
// with a 5xx or a transport error is retried under the same name, so an
// AlreadyExists after such a failure is the earlier attempt having landed.
type load struct {
	c      *http.Client
	url    string // collection URL
	prefix string
	body   int // bytes of data per object

	mu       sync.Mutex
	acked    map[string]bool
	outcomes map[string]int // "201", "503", "transport", ...
	bad      []string       // responses that break the contract
	hangs    atomic.Int64
	slowest  time.Duration
	stop     chan struct{}
	wg       sync.WaitGroup
	count    atomic.Int64 // acknowledged creates so far
}

func newLoad(c *http.Client, url, prefix string) *load {
	return &load{c: c, url: url, prefix: prefix, acked: map[string]bool{}, outcomes: map[string]int{}, stop: make(chan struct{})}
}

func (l *load) start(workers int) {
	for w := 0; w < workers; w++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for n := 0; ; n++ {
				name := fmt.Sprintf("%s-%d-%d", l.prefix, w, n)
				for retried := false; ; retried = true {
					select {
					case <-l.stop:
						return
					default:
					}
					o := l.create(name)
					if l.record(name, o, retried) {
						break
					}
					time.Sleep(20 * time.Millisecond) // back off before the retry
				}
			}
		}()
	}
}

// record files o and reports whether the create is settled.
func (l *load) record(name string, o outcome, retried bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := fmt.Sprint(o.code)
	if m := reasonRE.FindStringSubmatch(o.body); m != nil {
		key += " " + m[1]
	}
	if o.code == 0 {
		key = "transport error"
		if errors.Is(o.err, context.DeadlineExceeded) || isTimeout(o.err) {
			key = "client timeout"
			l.hangs.Add(1)
		}
	}
	l.outcomes[key]++
	switch {
	case o.code == http.StatusCreated:
		l.acked[name] = true
		l.count.Add(1)
		return true
	case o.code == http.StatusConflict && retried && strings.Contains(o.body, `"reason":"AlreadyExists"`):
		// An earlier attempt landed without its answer reaching us.
		return true
	case o.code >= 500:
		if !strings.Contains(o.body, `"kind":"Status"`) {
			l.bad = append(l.bad, fmt.Sprintf("%s: %d without a Status: %.200s", name, o.code, o.body))
		}
		return false
	case o.code == 0:
		return false
	default:
		l.bad = append(l.bad, fmt.Sprintf("%s: %d %.200s", name, o.code, o.body))
		return true
	}
}

var reasonRE = regexp.MustCompile(`"reason":"(\w+)"`)

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (l *load) create(name string) outcome {
	start := time.Now()
	defer func() {
		l.mu.Lock()
		l.slowest = max(l.slowest, time.Since(start))
		l.mu.Unlock()
	}()
	data := strings.Repeat("x", l.body)
	b, _ := json.Marshal(corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Data:       map[string]string{"d": data},
	})
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", l.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	resp, err := l.c.Do(req)
	if err != nil {
		return outcome{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return outcome{err: err}
	}
	return outcome{code: resp.StatusCode, body: string(body)}
}

// failures counts the answers that were not 2xx.
func (l *load) failures() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for k, v := range l.outcomes {
		if !strings.HasPrefix(k, "2") {
			n += v
		}
	}
	return n
}

// waitFor waits until n more creates were acknowledged.
func (l *load) waitFor(t *testing.T, n int64, within time.Duration) {
	t.Helper()
	target := l.count.Load() + n
	deadline := time.Now().Add(within)
	for l.count.Load() < target {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d acknowledged creates after %v; outcomes %v", l.count.Load(), target, within, l.summary())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
}

func (l *load) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var keys []string
	for k := range l.outcomes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, l.outcomes[k]))
	}
	return strings.Join(parts, ", ")
}

// verify lists the namespace and checks every acknowledged create is there.
func (l *load) verify(t *testing.T, cs kubernetes.Interface, ns string) {
	t.Helper()
	present := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opts := metav1.ListOptions{Limit: 100}
	for {
		// A page may still meet the tail of the fault (or the request
		// timeout on a loaded machine): retry it a few times.
		var list *corev1.ConfigMapList
		var err error
		for try := 0; try < 5; try++ {
			if list, err = cs.CoreV1().ConfigMaps(ns).List(ctx, opts); err == nil {
				break
			}
			t.Logf("list after the fault, try %d: %v", try+1, err)
			time.Sleep(time.Second)
		}
		if err != nil {
			t.Fatalf("list after the fault: %v", err)
		}
		for _, cm := range list.Items {
			present[cm.Name] = true
		}
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	sum := l.summary()
	l.mu.Lock()
	defer l.mu.Unlock()
	missing := 0
	for name := range l.acked {
		if !present[name] {
			missing++
			if missing <= 10 {
				t.Errorf("acknowledged create %s is missing", name)
			}
		}
	}
	for _, b := range l.bad {
		t.Errorf("response outside the contract: %s", b)
	}
	if h := l.hangs.Load(); h > 0 {
		t.Errorf("%d requests got no answer within the client timeout of %v", h, clientTimeout)
	}
	t.Logf("%d acknowledged creates, %d missing; outcomes: %s; slowest answer %v", len(l.acked), missing, sum, l.slowest.Round(time.Millisecond))
}

// httpClient is an HTTP/2 client from cfg with no client-side timeout of
// its own: each request carries its deadline.
func httpClient(t *testing.T, cfg *rest.Config) *http.Client {
	t.Helper()
	c, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func namespace(t *testing.T, cs kubernetes.Interface, name string) {
	t.Helper()
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
