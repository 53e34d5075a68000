package x509

import (
	"crypto/sha256"
	stdx509 "crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/kpipe/kpipe/internal/auth"
	"github.com/kpipe/kpipe/internal/pipeline"
	"github.com/kpipe/kpipe/internal/request"
)

// CredentialIDKey is kube's user extra key naming the credential used.
const CredentialIDKey = "authentication.kubernetes.io/credential-id"

// Authenticator verifies the request's client certificate.
type Authenticator struct {
	// roots returns the current client CA pool; it is asked on every
	// request, since the server reloads it.
	roots func() *stdx509.CertPool
	// now is the clock; nil means time.Now.
	now func() time.Time
	// verified remembers chains that verified, so a client's every
	// request does not repeat the signature checks.
	verified verifiedCache
}

var (
	_ auth.Authenticator   = (*Authenticator)(nil)
	_ pipeline.Provisioner = (*Authenticator)(nil)
)

// Provision implements pipeline.Provisioner.
func (a *Authenticator) Provision(env *pipeline.Env) error {
	if env.Shared == nil || env.Shared.ClientCA == nil {
		return errors.New("x509: the server offers no client CA")
	}
	a.roots = env.Shared.ClientCA
	return nil
}

// AuthenticateRequest implements auth.Authenticator. No client certificate
// is ok=false; one that does not verify is an error.
func (a *Authenticator) AuthenticateRequest(r *http.Request) (*request.User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || a.roots == nil {
		return nil, false, nil
	}
	roots := a.roots()
	if roots == nil {
		// Never fall back to the system roots.
		return nil, false, nil
	}
	peers := r.TLS.PeerCertificates
	leaf := peers[0]
	now := time.Now()
	if a.now != nil {
		now = a.now()
	}
	key := chainKey(peers)
	if u, ok := a.verified.get(key, roots, now); ok {
		return u, u != nil, nil
	}
	opts := stdx509.VerifyOptions{
		Roots:       roots,
		KeyUsages:   []stdx509.ExtKeyUsage{stdx509.ExtKeyUsageClientAuth},
		CurrentTime: now,
	}
	if len(peers) > 1 {
		opts.Intermediates = stdx509.NewCertPool()
		for _, c := range peers[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := leaf.Verify(opts)
	if err != nil {
		return nil, false, fmt.Errorf("verifying certificate %s failed: %w", identify(leaf), err)
	}
	var u *request.User
	if leaf.Subject.CommonName != "" {
		u = &request.User{
			Name:   leaf.Subject.CommonName,
			Groups: slices.Clone(leaf.Subject.Organization),
			Extra:  map[string][]string{CredentialIDKey: {fmt.Sprintf("X509SHA256=%x", sha256.Sum256(leaf.Raw))}},
		}
	}
	notBefore, notAfter := validity(chains[0])
	a.verified.put(key, roots, notBefore, notAfter, u)
	if u == nil {
		return nil, false, nil
	}
	return u.DeepCopy(), true, nil
}

// identify names a certificate in errors without its whole subject.
func identify(c *stdx509.Certificate) string {
	return fmt.Sprintf("CN=%q, serial=%s, issuer=%q", c.Subject.CommonName, c.SerialNumber, c.Issuer.CommonName)
}
