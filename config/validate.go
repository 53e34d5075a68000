package config

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Validate checks values that decode fine but cannot work. Every error is a
// *FieldError naming the key.
func (c *Config) Validate() error {
	var errs []error
	add := func(key, format string, args ...any) {
		errs = append(errs, &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)})
	}

	if strings.TrimSpace(c.StateDir) == "" {
		add("stateDir", "must not be empty")
	}
	if net.ParseIP(c.Server.BindAddress) == nil {
		add("server.bindAddress", "%q is not an IP address", c.Server.BindAddress)
	}
	if c.Server.SecurePort < 1 || c.Server.SecurePort > 65535 {
		add("server.securePort", "%d is out of range: must be between 1 and 65535", c.Server.SecurePort)
	}
	if a := c.Server.AdvertiseAddress; a != "" {
		if ip := net.ParseIP(a); ip == nil || ip.IsUnspecified() {
			add("server.advertiseAddress", "%q is not a usable IP address", a)
		}
	}
	if c.Server.HTTP2MaxStreamsPerConnection < 1 {
		add("server.http2MaxStreamsPerConnection", "must be at least 1, got %d", c.Server.HTTP2MaxStreamsPerConnection)
	}
	if c.Server.ShutdownDelayDuration < 0 {
		add("server.shutdownDelayDuration", "must not be negative")
	}
	if c.Server.ShutdownTimeout <= 0 {
		add("server.shutdownTimeout", "must be positive")
	}

	if (c.TLS.CertFile == "") != (c.TLS.PrivateKeyFile == "") {
		add("tls.certFile", "tls.certFile and tls.privateKeyFile must be set together")
	}
	if _, err := TLSVersion(c.TLS.MinVersion); err != nil {
		add("tls.minVersion", "%v", err)
	}
	if _, err := CipherSuites(c.TLS.CipherSuites); err != nil {
		add("tls.cipherSuites", "%v", err)
	}

	if strings.TrimSpace(c.ServiceAccount.Issuer) == "" {
		add("serviceAccount.issuer", "must not be empty")
	}
	if d := c.ServiceAccount.MaxTokenExpiration; d != 0 && (d < time.Hour || d > (1<<32)*time.Second) {
		add("serviceAccount.maxTokenExpiration", "must be between 1 hour and 2^32 seconds, got %s", d)
	}

	if !strings.HasPrefix(c.Storage.Prefix, "/") {
		add("storage.prefix", "%q must start with /", c.Storage.Prefix)
	}
	if c.Storage.EventTTL <= 0 {
		add("storage.eventTTL", "must be positive")
	}
	for i, r := range c.Storage.WatchCache.Disabled {
		if r == "" || strings.ContainsAny(r, "/ ") || r != strings.ToLower(r) {
			add(fmt.Sprintf("storage.watchCache.disabled[%d]", i), "%q is not a resource name such as \"events\" or \"deployments.apps\"", r)
		}
	}
	for i, ep := range c.Storage.Etcd.Endpoints {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add(fmt.Sprintf("storage.etcd.endpoints[%d]", i), "%q is not an http:// or https:// URL", ep)
		}
	}
	if (c.Storage.Etcd.CertFile == "") != (c.Storage.Etcd.KeyFile == "") {
		add("storage.etcd.certFile", "storage.etcd.certFile and storage.etcd.keyFile must be set together")
	}
	if c.Storage.Etcd.DialTimeout <= 0 {
		add("storage.etcd.dialTimeout", "must be positive")
	}
	if c.Storage.Etcd.HealthTimeout <= 0 {
		add("storage.etcd.healthTimeout", "must be positive")
	}

	if _, err := ServiceCIDR(c.Services.ClusterIPRange); err != nil {
		add("services.clusterIPRange", "%v", err)
	}
	if _, _, err := PortRange(c.Services.NodePortRange); err != nil {
		add("services.nodePortRange", "%v", err)
	}

	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		add("log.level", "%q is not one of debug, info, warn, error", c.Log.Level)
	}
	switch c.Log.Format {
	case "json", "console":
	default:
		add("log.format", "%q is not one of json, console", c.Log.Format)
	}
	if ep := c.Tracing.Endpoint; ep != "" {
		if _, port, err := net.SplitHostPort(ep); err != nil || port == "" {
			add("tracing.endpoint", "%q is not host:port (the OTLP gRPC collector, like localhost:4317)", ep)
		}
	}
	if r := c.Tracing.SamplingRatePerMillion; r < 0 || r > 1000000 {
		add("tracing.samplingRatePerMillion", "%d is out of range: must be between 0 and 1000000", r)
	}
	for i, e := range c.Pipeline {
		if e.Name == "" {
			add(fmt.Sprintf("pipeline[%d].name", i), "must not be empty")
		}
	}
	for i, e := range c.PostStartHooks {
		if e.Name == "" {
			add(fmt.Sprintf("postStartHooks[%d].name", i), "must not be empty")
		}
	}
	return errors.Join(errs...)
}

// ServiceCIDR parses the service range. Like kube, it wants a network
// address (10.96.0.0/12, not 10.96.0.1/12) with room for at least the
// kubernetes Service and one more.
func ServiceCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR", s)
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("%q is not a network address; did you mean %s?", s, p.Masked())
	}
	if p.Addr().BitLen()-p.Bits() < 2 {
		return netip.Prefix{}, fmt.Errorf("%q is too small: it needs room for at least 2 services", s)
	}
	return p, nil
}

// PortRange parses "30000-32767".
func PortRange(s string) (lo, hi int, err error) {
	a, b, ok := strings.Cut(s, "-")
	if ok {
		lo, err = strconv.Atoi(strings.TrimSpace(a))
		if err == nil {
			hi, err = strconv.Atoi(strings.TrimSpace(b))
		}
	}
	if !ok || err != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("%q is not a port range like 30000-32767", s)
	}
	return lo, hi, nil
}

// TLSVersion maps kube's names (VersionTLS12, VersionTLS13) to Go's
// constants. 1.0 and 1.1 are refused: they are broken.
func TLSVersion(name string) (uint16, error) {
	switch name {
	case "VersionTLS12":
		return tls.VersionTLS12, nil
	case "VersionTLS13":
		return tls.VersionTLS13, nil
	case "VersionTLS10", "VersionTLS11":
		return 0, fmt.Errorf("%s is not allowed: the minimum is VersionTLS12", name)
	}
	return 0, fmt.Errorf("%q is not one of VersionTLS12, VersionTLS13", name)
}

// CipherSuites maps names to IDs. Only Go's secure suites are accepted.
func CipherSuites(names []string) ([]uint16, error) {
	if len(names) == 0 {
		return nil, nil
	}
	known := map[string]uint16{}
	for _, s := range tls.CipherSuites() {
		known[s.Name] = s.ID
	}
	ids := make([]uint16, 0, len(names))
	for _, n := range names {
		id, ok := known[n]
		if !ok {
			return nil, fmt.Errorf("%q is not a supported secure cipher suite", n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
