package certs

import (
	"fmt"
	"os"
)

// EtcdFiles are the embedded etcd's certificates, all signed by one etcd
// CA of their own, as kubeadm's etcd has: the member trusts that CA alone
// for clients and peers, so only a holder of etcd-client.key (the server's
// user) gets in.
type EtcdFiles struct {
	CA                    string // etcd-ca.crt
	ServerCert, ServerKey string // etcd-server: the client port
	PeerCert, PeerKey     string // etcd-peer: the peer port
	ClientCert, ClientKey string // etcd-client: for tools (bench baseline, etcdctl)
}

// etcdHosts are the embedded member's SANs: it listens on loopback only.
var etcdHosts = []string{"localhost", "127.0.0.1", "::1"}

// EnsureEmbeddedEtcd creates (or reuses while still good) the embedded
// etcd's CA and certificates in dir, and leaves every file mode 0600: the
// client key opens the whole store, and nothing here is meant for anyone
// but the server's user.
func EnsureEmbeddedEtcd(dir string) (EtcdFiles, error) {
	ca, err := LoadOrCreateCA(dir, "etcd-ca", "kpipe-etcd-ca")
	if err != nil {
		return EtcdFiles{}, err
	}
	var f EtcdFiles
	f.CA, _ = pairPaths(dir, "etcd-ca")
	// Both certificates serve and authenticate as a client: etcd's gRPC
	// gateway dials its own client port with the serving certificate, as
	// peers dial each other with theirs.
	if f.ServerCert, f.ServerKey, err = ca.EnsurePeer(dir, "etcd-server", etcdHosts); err != nil {
		return EtcdFiles{}, err
	}
	if f.PeerCert, f.PeerKey, err = ca.EnsurePeer(dir, "etcd-peer", etcdHosts); err != nil {
		return EtcdFiles{}, err
	}
	if f.ClientCert, f.ClientKey, err = ca.EnsureClientFiles(dir, "etcd-client", "kpipe-etcd-client", nil); err != nil {
		return EtcdFiles{}, err
	}
	_, caKey := pairPaths(dir, "etcd-ca")
	for _, p := range []string{f.CA, caKey, f.ServerCert, f.ServerKey, f.PeerCert, f.PeerKey, f.ClientCert, f.ClientKey} {
		if err := os.Chmod(p, 0o600); err != nil {
			return EtcdFiles{}, fmt.Errorf("certs: %w", err)
		}
	}
	return f, nil
}
