package certs

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// EnsureServing returns dir/<name>.crt and dir/<name>.key: a serving
// certificate signed by a whose SANs cover every host in hosts. Existing files
// are reused when they parse, chain to a, cover all hosts and have more than
// 30 days left; otherwise they are (re)generated and generated is true.
func (a *Authority) EnsureServing(dir, name string, hosts []string) (certFile, keyFile string, generated bool, err error) {
	certFile, keyFile = pairPaths(dir, name)
	ok, err := a.reusable(certFile, keyFile, x509.ExtKeyUsageServerAuth, func(c *x509.Certificate) bool {
		for _, h := range hosts {
			if h != "" && c.VerifyHostname(h) != nil {
				return false
			}
		}
		return true
	})
	if err != nil {
		return "", "", false, err
	}
	if ok {
		return certFile, keyFile, false, nil
	}
	pair, err := a.IssueServing(hosts, servingValidity)
	if err != nil {
		return "", "", false, err
	}
	keyPEM, err := encodeKey(pair.PrivateKey.(crypto.Signer))
	if err != nil {
		return "", "", false, err
	}
	if err := writePair(dir, certFile, keyFile, encodeCert(pair.Certificate[0]), keyPEM); err != nil {
		return "", "", false, err
	}
	return certFile, keyFile, true, nil
}

// EnsureClientFiles returns dir/<name>.crt and dir/<name>.key: a client
// certificate signed by a with CN=cn and O=orgs. Existing files are reused
// when they chain to a, carry the same CN and O and have more than 30 days
// left; otherwise they are (re)generated.
func (a *Authority) EnsureClientFiles(dir, name, cn string, orgs []string) (certFile, keyFile string, err error) {
	certFile, keyFile = pairPaths(dir, name)
	want := slices.Sorted(slices.Values(orgs))
	ok, err := a.reusable(certFile, keyFile, x509.ExtKeyUsageClientAuth, func(c *x509.Certificate) bool {
		return c.Subject.CommonName == cn && slices.Equal(slices.Sorted(slices.Values(c.Subject.Organization)), want)
	})
	if err != nil {
		return "", "", err
	}
	if ok {
		return certFile, keyFile, nil
	}
	certPEM, keyPEM, err := a.IssueClient(cn, orgs, clientValidity)
	if err != nil {
		return "", "", err
	}
	if err := writePair(dir, certFile, keyFile, certPEM, keyPEM); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}

// reusable reports whether certFile and keyFile hold a matching pair issued
// by a for usage, with more than renewBefore left, that match accepts.
// Missing or unparsable files just mean "no", as they are about to be
// replaced; other read errors are returned, since writing would fail too.
func (a *Authority) reusable(certFile, keyFile string, usage x509.ExtKeyUsage, match func(*x509.Certificate) bool) (bool, error) {
	certPEM, err := readIfExists(certFile)
	if err != nil || certPEM == nil {
		return false, err
	}
	keyPEM, err := readIfExists(keyFile)
	if err != nil || keyPEM == nil {
		return false, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, nil
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return false, nil
	}
	if time.Until(leaf.NotAfter) < renewBefore {
		return false, nil
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: a.pool(), KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		return false, nil
	}
	return match(leaf), nil
}

func readIfExists(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	return b, nil
}

// writePair writes the key before the certificate: a crash in between leaves
// a mismatched pair, which the next Ensure call detects and replaces.
func writePair(dir, certFile, keyFile string, certPEM, keyPEM []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	if err := writeFileAtomic(keyFile, keyPEM, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(certFile, certPEM, 0o644)
}

// WriteKubeconfig writes a kubeconfig with one cluster, user and context, all
// named contextName, with credentials embedded. caPEM may be nil, leaving the
// server to be verified against the system roots.
func WriteKubeconfig(path, server, contextName string, caPEM, certPEM, keyPEM []byte) error {
	if contextName == "" {
		return errors.New("certs: kubeconfig needs a context name")
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: certPEM, ClientKeyData: keyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return fmt.Errorf("certs: encode kubeconfig %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("certs: %w", err)
	}
	return writeFileAtomic(path, data, 0o600)
}

// writeFileAtomic replaces path with data via a temporary file in the same
// directory and a rename, so readers (and a crash) never see a partial file,
// and the mode is exactly mode whatever the previous file or umask had.
func writeFileAtomic(path string, data []byte, mode os.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("certs: write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
			err = fmt.Errorf("certs: write %s: %w", path, err)
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	// Persist the rename too; best effort, as not every filesystem allows
	// syncing a directory.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// EnsurePeer is EnsureServing for a certificate that both serves and
// authenticates as a client, as etcd members need for peer traffic.
func (a *Authority) EnsurePeer(dir, name string, hosts []string) (certFile, keyFile string, err error) {
	certFile, keyFile = pairPaths(dir, name)
	ok, err := a.reusable(certFile, keyFile, x509.ExtKeyUsageClientAuth, func(c *x509.Certificate) bool {
		if !slices.Contains(c.ExtKeyUsage, x509.ExtKeyUsageServerAuth) {
			return false
		}
		for _, h := range hosts {
			if h != "" && c.VerifyHostname(h) != nil {
				return false
			}
		}
		return true
	})
	if err != nil || ok {
		return certFile, keyFile, err
	}
	certPEM, keyPEM, err := a.issuePEM(hosts, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, servingValidity)
	if err != nil {
		return "", "", err
	}
	return certFile, keyFile, writePair(dir, certFile, keyFile, certPEM, keyPEM)
}
