package server

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/server/certs"
)

// LoopbackServerName is the SNI name the loopback client asks for; the
// listener answers it with a certificate of its own, as kube-apiserver's
// "apiserver-loopback-client" does, so the loopback client works whatever
// serving certificate the operator gives.
const LoopbackServerName = "apiserver-loopback-client"

// pki is the server's certificates: serving, loopback and client trust.
type pki struct {
	dir      string
	ca       *certs.Authority // signs the generated serving and loopback certs
	clientCA *certs.Authority // signs admin.kubeconfig's client cert

	serving   func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	loopback  tls.Certificate
	clientCAs func() *x509.CertPool
	// servingCAPEM is what clients should trust for the serving cert: the
	// generated CA, or nil when the operator gave the serving cert.
	servingCAPEM []byte

	runners []func(context.Context) // file watchers
}

// setupPKI loads or creates what the listener needs under stateDir/pki.
func setupPKI(cfg *config.Config, advertise net.IP, log *zap.Logger) (*pki, error) {
	p := &pki{dir: filepath.Join(cfg.StateDir, "pki")}
	var err error
	if p.ca, err = certs.LoadOrCreateCA(p.dir, "ca", "kpipe-ca"); err != nil {
		return nil, err
	}
	if p.clientCA, err = certs.LoadOrCreateCA(p.dir, "client-ca", "kpipe-client-ca"); err != nil {
		return nil, err
	}

	hostname, _ := os.Hostname()
	hosts := certs.HostsFor(hostname, advertise, firstServiceIP(cfg.Services.ClusterIPRange))

	if cfg.TLS.CertFile != "" {
		fc, err := certs.NewFileCertificate(cfg.TLS.CertFile, cfg.TLS.PrivateKeyFile, log)
		if err != nil {
			return nil, err
		}
		p.serving = fc.GetCertificate
		p.runners = append(p.runners, fc.Run)
	} else {
		certFile, keyFile, generated, err := p.ca.EnsureServing(p.dir, "apiserver", hosts)
		if err != nil {
			return nil, err
		}
		if generated {
			log.Info("generated serving certificate", zap.String("file", certFile), zap.Strings("hosts", hosts))
		}
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("serving certificate %s: %w", certFile, err)
		}
		p.serving = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &pair, nil }
		p.servingCAPEM = p.ca.CertPEM
	}

	if p.loopback, err = p.ca.IssueServing([]string{LoopbackServerName}, 365*24*time.Hour); err != nil {
		return nil, fmt.Errorf("loopback certificate: %w", err)
	}

	// The generated client CA is always trusted, so admin.kubeconfig works;
	// an operator's bundle is trusted in addition.
	own := x509.NewCertPool()
	own.AddCert(p.clientCA.Cert)
	p.clientCAs = func() *x509.CertPool { return own }
	if cfg.TLS.ClientCAFile != "" {
		fp, err := certs.NewFileCAPool(cfg.TLS.ClientCAFile, log)
		if err != nil {
			return nil, err
		}
		p.runners = append(p.runners, fp.Run)
		// One merged pool per loaded bundle: the same pool until a reload,
		// so the x509 authenticator's cache of verified chains holds, and
		// a new one after, which empties that cache.
		type merged struct{ src, pool *x509.CertPool }
		var cur atomic.Pointer[merged]
		p.clientCAs = func() *x509.CertPool {
			src := fp.Pool()
			if m := cur.Load(); m != nil && m.src == src {
				return m.pool
			}
			pool := src.Clone()
			pool.AddCert(p.clientCA.Cert)
			cur.Store(&merged{src: src, pool: pool})
			return pool
		}
	}
	return p, nil
}

// getCertificate picks the loopback certificate for the loopback SNI name
// and the serving certificate for everything else.
func (p *pki) getCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	if hello.ServerName == LoopbackServerName {
		return &p.loopback, nil
	}
	return p.serving(hello)
}

// writeAdminKubeconfig writes stateDir/admin.kubeconfig for kubernetes-admin
// in system:masters, signed by the client CA.
func (p *pki) writeAdminKubeconfig(path, serverURL string) error {
	certFile, keyFile, err := p.clientCA.EnsureClientFiles(p.dir, "admin", "kubernetes-admin", []string{"system:masters"})
	if err != nil {
		return err
	}
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	return certs.WriteKubeconfig(path, serverURL, "kpipe", p.servingCAPEM, certPEM, keyPEM)
}

// firstServiceIP is the kubernetes Service's IP: the range's first host.
func firstServiceIP(cidr string) net.IP {
	pfx, err := config.ServiceCIDR(cidr)
	if err != nil {
		return nil
	}
	return net.IP(pfx.Addr().Next().AsSlice())
}

// newToken returns a random bearer token for the loopback client.
func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// advertiseAddress is the configured address, or the host's first
// non-loopback address. With only loopback, it falls back to the bind
// address (or 127.0.0.1) with a warning: kube refuses, kpipe must run on a
// laptop.
func advertiseAddress(cfg *config.Config, log *zap.Logger) net.IP {
	if a := cfg.Server.AdvertiseAddress; a != "" {
		return net.ParseIP(a)
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		var v6 net.IP
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, _ := netip.AddrFromSlice(ipn.IP)
			ip = ip.Unmap()
			if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || ip.IsUnspecified() {
				continue
			}
			if ip.Is4() {
				return net.IP(ip.AsSlice())
			}
			if v6 == nil {
				v6 = net.IP(ip.AsSlice())
			}
		}
		if v6 != nil {
			return v6
		}
	}
	ip := net.ParseIP(cfg.Server.BindAddress)
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
	}
	log.Warn("no non-loopback address found; advertising the bind address", zap.Stringer("address", ip))
	return ip
}
