// Package webhook is the client the authentication and authorization
// webhooks share: a kubeconfig file naming the remote service, its CA and
// the client credentials; one JSON POST per review; kube-apiserver's
// retries with exponential backoff.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultTimeout bounds one call, reading the answer included: kube's
// webhook request timeout (a kubeconfig file cannot set one).
const DefaultTimeout = 30 * time.Second

// DefaultBackoff is kube-apiserver's retry backoff for both auth
// webhooks: up to 5 attempts, 500 ms apart at first, growing by 1.5 with
// 20 % jitter.
func DefaultBackoff() wait.Backoff {
	return wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// LoadKubeconfig reads a kubeconfig file the way kube-apiserver reads its
// webhook config files: its current context's cluster is the remote
// service (server URL, certificate-authority), its user the credentials
// the server presents (client certificate, token). timeout replaces
// DefaultTimeout when more than 0. No client-side rate limit applies.
func LoadKubeconfig(path string, timeout time.Duration) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: path}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.Timeout = DefaultTimeout
	if timeout > 0 {
		cfg.Timeout = timeout
	}
	cfg.QPS = -1
	return cfg, nil
}

// Client posts reviews of one group version to the kubeconfig's server
// URL, exactly as written there (any path: the remote need not be an API
// server).
type Client struct {
	rest *rest.RESTClient
}

// NewClient returns a client sending and expecting objects of gv as JSON.
func NewClient(cfg *rest.Config, gv schema.GroupVersion) (*Client, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if !scheme.IsVersionRegistered(gv) {
		return nil, fmt.Errorf("webhook plugin requires enabling extension resource: %s", gv)
	}
	c := rest.CopyConfig(cfg)
	codec := serializer.NewCodecFactory(scheme).LegacyCodec(gv)
	c.ContentType = runtime.ContentTypeJSON
	c.NegotiatedSerializer = serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: codec})
	rc, err := rest.UnversionedRESTClientFor(c)
	if err != nil {
		return nil, err
	}
	return &Client{rest: rc}, nil
}

// Post sends in and decodes the answer into out. code is the HTTP status,
// 0 when no answer came (a connection error).
func (c *Client) Post(ctx context.Context, in, out runtime.Object) (code int, err error) {
	res := c.rest.Post().Body(in).Do(ctx)
	res.StatusCode(&code)
	return code, res.Into(out)
}

// CloseIdleConnections closes the client's idle connections, once the
// plugin holding it is retired.
func (c *Client) CloseIdleConnections() {
	if c != nil && c.rest != nil && c.rest.Client != nil {
		c.rest.Client.CloseIdleConnections()
	}
}

// ShouldRetry says which errors kube-apiserver retries: a reset or lost
// connection, 500, 504 (Timeout), 429, and any answer with Retry-After.
// A refused connection is not retried.
func ShouldRetry(err error) bool {
	if err == nil {
		return false
	}
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, retry := apierrors.SuggestsClientDelay(err)
	return retry
}

// WithBackoff calls fn until it succeeds, fails with an error that
// shouldRetry refuses, the backoff's steps are spent or ctx ends. It
// returns fn's last error; when ctx ended before fn ever failed, an
// error saying so.
func WithBackoff(ctx context.Context, b wait.Backoff, fn func() error, shouldRetry func(error) bool) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, b, func(context.Context) (bool, error) {
		last = fn()
		if last == nil {
			return true, nil
		}
		if shouldRetry(last) {
			return false, nil
		}
		return false, last
	})
	switch {
	case last != nil:
		return last
	case err != nil:
		return fmt.Errorf("webhook call failed: %s", err.Error())
	}
	return nil
}

// IsTimeout says whether err is a call that timed out: a network or
// context deadline, a Timeout Status, or a 504.
func IsTimeout(err error, code int) bool {
	return utilnet.IsTimeout(err) || errors.Is(err, context.DeadlineExceeded) || apierrors.IsTimeout(err) || code == 504
}
