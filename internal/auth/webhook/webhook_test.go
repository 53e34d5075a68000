package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestShouldRetry(t *testing.T) {
	gr := schema.GroupResource{}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"success", nil, false},
		{"connection reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, true},
		{"connection refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, false},
		{"500", apierrors.NewGenericServerResponse(500, "post", gr, "", "", 0, true), true},
		{"504", apierrors.NewGenericServerResponse(504, "post", gr, "", "", 0, true), true},
		{"429", apierrors.NewGenericServerResponse(429, "post", gr, "", "", 0, true), true},
		{"503 with Retry-After", apierrors.NewGenericServerResponse(503, "post", gr, "", "", 1, true), true},
		{"503", apierrors.NewGenericServerResponse(503, "post", gr, "", "", 0, true), false},
		{"400", apierrors.NewGenericServerResponse(400, "post", gr, "", "", 0, true), false},
		{"401", apierrors.NewGenericServerResponse(401, "post", gr, "", "", 0, true), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ShouldRetry(tc.err); got != tc.want {
				t.Errorf("ShouldRetry(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestWithBackoff(t *testing.T) {
	fast := wait.Backoff{Duration: time.Millisecond, Factor: 1.5, Steps: 5}
	retryable := apierrors.NewInternalError(errors.New("flaky"))
	t.Run("retries up to the steps and returns the last error", func(t *testing.T) {
		n := 0
		err := WithBackoff(context.Background(), fast, func() error { n++; return fmt.Errorf("try %d: %w", n, retryable) }, ShouldRetry)
		if n != 5 || err == nil || !strings.HasPrefix(err.Error(), "try 5") {
			t.Fatalf("%d attempts, err %v", n, err)
		}
	})
	t.Run("stops at an error not to retry", func(t *testing.T) {
		n := 0
		err := WithBackoff(context.Background(), fast, func() error { n++; return errors.New("bad request") }, ShouldRetry)
		if n != 1 || err == nil {
			t.Fatalf("%d attempts, err %v", n, err)
		}
	})
	t.Run("stops at a success", func(t *testing.T) {
		n := 0
		err := WithBackoff(context.Background(), fast, func() error {
			n++
			if n < 3 {
				return retryable
			}
			return nil
		}, ShouldRetry)
		if n != 3 || err != nil {
			t.Fatalf("%d attempts, err %v", n, err)
		}
	})
	t.Run("kube's default backoff", func(t *testing.T) {
		if b := DefaultBackoff(); b.Duration != 500*time.Millisecond || b.Factor != 1.5 || b.Jitter != 0.2 || b.Steps != 5 {
			t.Fatalf("%+v", b)
		}
	})
}

func TestLoadKubeconfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "kc")
	if err := os.WriteFile(p, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:8443/review"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadKubeconfig(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.Host != "https://127.0.0.1:8443/review" || c.BearerToken != "t" || c.Timeout != 30*time.Second || c.QPS != -1 {
		t.Errorf("host %q token %q timeout %s qps %v", c.Host, c.BearerToken, c.Timeout, c.QPS)
	}
	if c, _ := LoadKubeconfig(p, 5*time.Second); c.Timeout != 5*time.Second {
		t.Errorf("timeout %s, want 5s", c.Timeout)
	}
	if _, err := LoadKubeconfig(filepath.Join(t.TempDir(), "none"), 0); err == nil {
		t.Error("a missing file loaded")
	}
}
