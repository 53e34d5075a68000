package webhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// ServiceResolver finds an address (host:port) serving a service's port,
// kube's ServiceResolver.
type ServiceResolver interface {
	Resolve(ctx context.Context, namespace, name string, port int32) (string, error)
}

// Clients hands out one HTTPS client per webhook client config (caBundle,
// server name, service), cached until the configurations change: the
// cache is dropped when the generation it is asked with moves.
type Clients struct {
	Resolver ServiceResolver

	mu    sync.Mutex
	gen   uint64
	cache map[string]*http.Client
}

// maxClients bounds the cache between two configuration changes.
const maxClients = 256

// Target is where a webhook is called: its client and its URL.
type Target struct {
	Client *http.Client
	URL    *url.URL
}

// For returns the client and URL for cc. gen is the generation of the
// configurations cc was read from.
func (c *Clients) For(gen uint64, webhook string, cc admissionregistrationv1.WebhookClientConfig) (Target, error) {
	var u *url.URL
	serverName, serviceHost := "", ""
	var svc *admissionregistrationv1.ServiceReference
	switch {
	case cc.Service != nil:
		svc = cc.Service
		port := int32(443)
		if svc.Port != nil && *svc.Port != 0 {
			port = *svc.Port
		}
		serverName = svc.Name + "." + svc.Namespace + ".svc"
		serviceHost = net.JoinHostPort(serverName, strconv.Itoa(int(port)))
		path := ""
		if svc.Path != nil {
			path = *svc.Path
		}
		u = &url.URL{Scheme: "https", Host: serviceHost, Path: path}
	case cc.URL != nil && *cc.URL != "":
		var err error
		if u, err = url.Parse(*cc.URL); err != nil {
			return Target{}, &CallError{Webhook: webhook, Reason: fmt.Errorf("Unparsable URL: %v", err)}
		}
	default:
		return Target{}, &CallError{Webhook: webhook, Reason: errors.New("webhook configuration must have either service or URL")}
	}
	key := serviceHost + "\x00" + string(cc.CABundle)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cache == nil || c.gen != gen || len(c.cache) >= maxClients {
		c.closeLocked()
		c.cache, c.gen = map[string]*http.Client{}, gen
	}
	if cl, ok := c.cache[key]; ok {
		return Target{Client: cl, URL: u}, nil
	}
	cl, err := c.newClient(cc.CABundle, serverName, svc, serviceHost)
	if err != nil {
		return Target{}, &CallError{Webhook: webhook, Reason: fmt.Errorf("could not get REST client: %w", err)}
	}
	c.cache[key] = cl
	return Target{Client: cl, URL: u}, nil
}

func (c *Clients) newClient(caBundle []byte, serverName string, svc *admissionregistrationv1.ServiceReference, serviceHost string) (*http.Client, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caBundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caBundle) {
			return nil, errors.New("unable to load root certificates: unable to parse bytes as PEM block")
		}
		tlsConfig.RootCAs = pool
	}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	dial := dialer.DialContext
	if svc != nil {
		ns, name := svc.Namespace, svc.Name
		port := int32(443)
		if svc.Port != nil && *svc.Port != 0 {
			port = *svc.Port
		}
		resolver := c.Resolver
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == serviceHost {
				if resolver == nil {
					return nil, errors.New("no service resolver")
				}
				a, err := resolver.Resolve(ctx, ns, name, port)
				if err != nil {
					return nil, err
				}
				addr = a
			}
			return dialer.DialContext(ctx, network, addr)
		}
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         dial,
			TLSClientConfig:     tlsConfig,
			TLSHandshakeTimeout: 10 * time.Second,
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		},
		// A webhook answers; it does not redirect.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

func (c *Clients) closeLocked() {
	for _, cl := range c.cache {
		cl.CloseIdleConnections()
	}
	c.cache = nil
}

// Close drops the cached clients and their idle connections.
func (c *Clients) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked()
}
