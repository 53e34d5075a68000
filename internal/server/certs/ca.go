// Package certs is kpipe's PKI: a CA kept on disk, the serving and client
// certificates it issues, kubeconfigs that embed them, and hot reloading of
// certificate files supplied by the operator.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const (
	caValidity      = 10 * 365 * 24 * time.Hour
	servingValidity = 365 * 24 * time.Hour
	clientValidity  = 365 * 24 * time.Hour
	// renewBefore is how much life a certificate on disk must have left to
	// be reused, so a restart well before expiry renews it.
	renewBefore = 30 * 24 * time.Hour
	// backdate tolerates peers whose clocks run a little behind ours.
	backdate = 5 * time.Minute
)

// Authority is a CA whose key is on disk.
type Authority struct {
	Cert    *x509.Certificate
	Key     crypto.Signer
	CertPEM []byte
}

// LoadOrCreateCA loads dir/<name>.crt and dir/<name>.key, or creates a
// self-signed CA (ECDSA P-256, 10 years, CN=commonName) when both are absent.
// A half-present pair is an error rather than a silent new CA, because a new
// CA would invalidate every certificate and kubeconfig issued so far.
func LoadOrCreateCA(dir, name, commonName string) (*Authority, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	certFile, keyFile := pairPaths(dir, name)
	haveCert, err := exists(certFile)
	if err != nil {
		return nil, err
	}
	haveKey, err := exists(keyFile)
	if err != nil {
		return nil, err
	}
	switch {
	case haveCert && haveKey:
		return loadCA(certFile, keyFile)
	case haveCert:
		return nil, fmt.Errorf("certs: CA certificate %s exists but its key %s is missing", certFile, keyFile)
	case haveKey:
		return nil, fmt.Errorf("certs: CA key %s exists but its certificate %s is missing", keyFile, certFile)
	}
	return createCA(certFile, keyFile, commonName)
}

func loadCA(certFile, keyFile string) (*Authority, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	cert, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("certs: %s: %w", certFile, err)
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("certs: %s is not a CA certificate", certFile)
	}
	// Refuse an expired CA: everything it signs would fail verification.
	if time.Now().After(cert.NotAfter) {
		return nil, fmt.Errorf("certs: CA certificate %s expired at %s", certFile, cert.NotAfter.Format(time.RFC3339))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("certs: %s: %w", keyFile, err)
	}
	if !samePublicKey(cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("certs: key %s does not match certificate %s", keyFile, certFile)
	}
	return &Authority{Cert: cert, Key: key, CertPEM: certPEM}, nil
}

func createCA(certFile, keyFile, commonName string) (*Authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("certs: generate CA key: %w", err)
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		// The CA signs leaves only; no intermediates below it.
		MaxPathLenZero: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("certs: create CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("certs: parse new CA certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := encodeCert(der)
	if err := writeFileAtomic(keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := writeFileAtomic(certFile, certPEM, 0o644); err != nil {
		// Do not leave a lone key behind: it would block the next start.
		os.Remove(keyFile)
		return nil, err
	}
	return &Authority{Cert: cert, Key: key, CertPEM: certPEM}, nil
}

// pool is a pool holding just the CA, for verifying what it issued.
func (a *Authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.Cert)
	return p
}

// issue signs tmpl with a fresh P-256 key, filling in serial and validity.
func (a *Authority) issue(tmpl *x509.Certificate, validity time.Duration) ([]byte, *ecdsa.PrivateKey, error) {
	if validity <= 0 {
		return nil, nil, fmt.Errorf("certs: validity %v is not positive", validity)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: generate key: %w", err)
	}
	if tmpl.SerialNumber, err = newSerial(); err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.NotBefore = now.Add(-backdate)
	tmpl.NotAfter = now.Add(validity)
	// A leaf outliving its CA would only fail verification late; be honest.
	if tmpl.NotAfter.After(a.Cert.NotAfter) {
		tmpl.NotAfter = a.Cert.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.Cert, key.Public(), a.Key)
	if err != nil {
		return nil, nil, fmt.Errorf("certs: sign certificate: %w", err)
	}
	return der, key, nil
}

// IssueServing makes an in-memory serving certificate for hosts (DNS names
// and IP literals, mixed).
func (a *Authority) IssueServing(hosts []string, validity time.Duration) (tls.Certificate, error) {
	der, key, err := a.issueHosts(hosts, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, validity)
	if err != nil {
		return tls.Certificate{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("certs: parse new certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// issuePEM is issueHosts encoded as PEM.
func (a *Authority) issuePEM(hosts []string, usages []x509.ExtKeyUsage, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	der, key, err := a.issueHosts(hosts, usages, validity)
	if err != nil {
		return nil, nil, err
	}
	if keyPEM, err = encodeKey(key); err != nil {
		return nil, nil, err
	}
	return encodeCert(der), keyPEM, nil
}

// issueHosts signs a certificate for hosts (DNS names and IP literals,
// mixed) with the given usages; the CN is the first host.
func (a *Authority) issueHosts(hosts []string, usages []x509.ExtKeyUsage, validity time.Duration) ([]byte, *ecdsa.PrivateKey, error) {
	dns, ips := splitHosts(hosts)
	if len(dns)+len(ips) == 0 {
		return nil, nil, errors.New("certs: serving certificate needs at least one host")
	}
	var cn string
	if len(dns) > 0 {
		cn = dns[0]
	} else {
		cn = ips[0].String()
	}
	return a.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		DNSNames:    dns,
		IPAddresses: ips,
		ExtKeyUsage: usages,
	}, validity)
}

// IssueClient makes a client certificate with CN=cn and O=orgs, which
// Kubernetes-style authenticators read as user name and groups.
func (a *Authority) IssueClient(cn string, orgs []string, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	if cn == "" {
		return nil, nil, errors.New("certs: client certificate needs a common name")
	}
	der, key, err := a.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn, Organization: slices.Clone(orgs)},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, validity)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return encodeCert(der), keyPEM, nil
}

// HostsFor returns the standard SAN list for the API server: loopback, the
// node's name and address, the in-cluster service names and the service IP,
// deduplicated in a stable order. The hostname is lowercased because DNS
// names compare case-insensitively.
func HostsFor(hostname string, advertise net.IP, serviceIP net.IP) []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if hostname != "" {
		hosts = append(hosts, strings.ToLower(hostname))
	}
	if advertise != nil && !advertise.IsUnspecified() {
		hosts = append(hosts, advertise.String())
	}
	hosts = append(hosts,
		"kubernetes",
		"kubernetes.default",
		"kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local",
	)
	if serviceIP != nil && !serviceIP.IsUnspecified() {
		hosts = append(hosts, serviceIP.String())
	}
	seen := make(map[string]bool, len(hosts))
	out := hosts[:0]
	for _, h := range hosts {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// splitHosts separates IP literals from DNS names, dropping blanks and
// duplicates while keeping order.
func splitHosts(hosts []string) (dns []string, ips []net.IP) {
	seen := map[string]bool{}
	for _, h := range hosts {
		if h == "" {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			if k := ip.String(); !seen[k] {
				seen[k] = true
				ips = append(ips, ip)
			}
			continue
		}
		if k := strings.ToLower(h); !seen[k] {
			seen[k] = true
			dns = append(dns, h)
		}
	}
	return dns, ips
}

func newSerial() (*big.Int, error) {
	s, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, fmt.Errorf("certs: generate serial: %w", err)
	}
	return s, nil
}

func pairPaths(dir, name string) (certFile, keyFile string) {
	return filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("certs: %w", err)
}

func samePublicKey(a, b crypto.PublicKey) bool {
	k, ok := a.(interface{ Equal(crypto.PublicKey) bool })
	return ok && k.Equal(b)
}
