package certs

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Cluster is what `apiserver pki init` makes: one PKI shared by several
// replicas behind a load balancer, and optionally by their etcd members.
type Cluster struct {
	// Dir receives every file.
	Dir string
	// Replicas are the API servers' names: each gets <name>.crt/.key
	// with its name, Hosts and the in-cluster names in its SANs.
	Replicas []string
	// Hosts are extra SANs on every replica's certificate: the load
	// balancer's name and address.
	Hosts []string
	// ServiceIP is the kubernetes Service's IP (10.96.0.1).
	ServiceIP net.IP
	// Server is the URL admin.kubeconfig points at (the load balancer).
	Server string
	// EtcdMembers are etcd members' names: each gets etcd-peer/serving
	// certificates from a separate etcd CA, and the replicas a client
	// certificate for it. Empty: no etcd PKI.
	EtcdMembers []string
	// EtcdHosts are extra SANs on every member's certificate: the
	// members' addresses when peers and clients dial them by IP.
	EtcdHosts []string
}

// Init creates the files, reusing any that are still good, so running it
// again adds a replica without rotating the CAs everyone trusts.
func (c Cluster) Init() ([]string, error) {
	if c.Dir == "" || len(c.Replicas) == 0 {
		return nil, errors.New("certs: a directory and at least one replica are required")
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("certs: %w", err)
	}
	var made []string
	add := func(files ...string) {
		for _, f := range files {
			made = append(made, filepath.Base(f))
		}
	}
	ca, err := LoadOrCreateCA(c.Dir, "ca", "kpipe-ca")
	if err != nil {
		return nil, err
	}
	clientCA, err := LoadOrCreateCA(c.Dir, "client-ca", "kpipe-client-ca")
	if err != nil {
		return nil, err
	}
	add("ca.crt", "ca.key", "client-ca.crt", "client-ca.key")
	for _, r := range c.Replicas {
		hosts := append(HostsFor(r, nil, c.ServiceIP), c.Hosts...)
		cert, key, _, err := ca.EnsureServing(c.Dir, r, hosts)
		if err != nil {
			return nil, err
		}
		add(cert, key)
	}
	certFile, keyFile, err := clientCA.EnsureClientFiles(c.Dir, "admin", "kubernetes-admin", []string{"system:masters"})
	if err != nil {
		return nil, err
	}
	add(certFile, keyFile)
	// Prometheus scrapes /metrics as a member of system:monitoring, which
	// kube's default RBAC lets read metrics and health, and nothing else.
	promCert, promKey, err := clientCA.EnsureClientFiles(c.Dir, "prometheus", "prometheus", []string{"system:monitoring"})
	if err != nil {
		return nil, err
	}
	add(promCert, promKey)
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, err
	}
	if err := WriteKubeconfig(filepath.Join(c.Dir, "admin.kubeconfig"), c.Server, "kpipe", ca.CertPEM, certPEM, keyPEM); err != nil {
		return nil, err
	}
	add("admin.kubeconfig")
	if len(c.EtcdMembers) == 0 {
		return made, nil
	}
	etcdCA, err := LoadOrCreateCA(c.Dir, "etcd-ca", "kpipe-etcd-ca")
	if err != nil {
		return nil, err
	}
	add("etcd-ca.crt", "etcd-ca.key")
	for _, m := range c.EtcdMembers {
		cert, key, err := etcdCA.EnsurePeer(c.Dir, m, append([]string{m, "localhost", "127.0.0.1"}, c.EtcdHosts...))
		if err != nil {
			return nil, err
		}
		add(cert, key)
	}
	cert, key, err := etcdCA.EnsureClientFiles(c.Dir, "apiserver-etcd-client", "kpipe-apiserver", nil)
	if err != nil {
		return nil, err
	}
	add(cert, key)
	return made, nil
}
