package servere2e

import (
	"context"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
)

// collector is a real OTLP/gRPC trace receiver on loopback.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func startCollector(t *testing.T) (*collector, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, c)
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	return c, ln.Addr().String()
}

func TestTracingExportsRequestAndStageSpans(t *testing.T) {
	col, addr := startCollector(t)
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		c.Tracing.Endpoint = addr
		c.Tracing.SamplingRatePerMillion = 0 // only what the caller sampled
	}})
	c := ts.HTTPClient(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest("GET", ts.URL()+"/healthz", nil)
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// A create marks kube's points on its stage spans.
	create, _ := http.NewRequest("POST", ts.URL()+"/api/v1/namespaces/default/configmaps",
		strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"traced"}}`))
	create.Header.Set("Content-Type", "application/json")
	create.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b8-01")
	resp, err = c.Do(create)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("create: %d", resp.StatusCode)
	}
	// An unsampled request without a parent is not exported.
	if code, _ := e2eutil.Get(t, c, ts.URL()+"/livez"); code != 200 {
		t.Fatal(code)
	}
	ts.Stop(t) // flushes the batcher

	col.mu.Lock()
	defer col.mu.Unlock()
	byName := map[string]*tracepb.Span{}
	for _, s := range col.spans {
		if hex.EncodeToString(s.TraceId) != traceID {
			t.Errorf("span %q in trace %x: only the sampled caller's trace should be exported", s.Name, s.TraceId)
		}
		if _, dup := byName[s.Name]; !dup {
			byName[s.Name] = s // the first request's
		}
	}
	root := byName["KubernetesAPI"]
	if root == nil {
		t.Fatalf("no KubernetesAPI span among %d", len(col.spans))
	}
	if hex.EncodeToString(root.ParentSpanId) != "00f067aa0ba902b7" {
		t.Errorf("root span parent %x, want the caller's span", root.ParentSpanId)
	}
	for _, stage := range config.DefaultPipeline {
		if byName["stage "+stage] == nil {
			t.Errorf("no span for stage %s", stage)
		}
	}
	events := map[string]bool{}
	for _, s := range col.spans {
		for _, e := range s.Events {
			events[s.Name+": "+e.Name] = true
		}
	}
	for _, want := range []string{
		"stage decode: About to convert to expected version",
		"stage etcd-writer: About to store object in database",
		"stage etcd-writer: Write to database call succeeded",
	} {
		if !events[want] {
			t.Errorf("no span event %q; have %v", want, events)
		}
	}
	// Stage spans nest in pipeline order.
	if a, b := byName["stage request-info"], byName["stage max-inflight"]; a != nil && b != nil && string(b.ParentSpanId) != string(a.SpanId) {
		t.Errorf("max-inflight's span is not a child of request-info's")
	}
}
