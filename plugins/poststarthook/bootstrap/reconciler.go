package bootstrap

import (
	"context"
	"encoding/json"
	"net"
	"path"
	"slices"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
	corev1 "k8s.io/api/core/v1"
)

// reconciler keeps the set of live servers, whose addresses the kubernetes
// endpoints list.
type reconciler interface {
	// renew marks this server live and returns every live server's address.
	renew(ctx context.Context) ([]string, error)
	// remove marks this server gone and returns the others' addresses.
	remove(ctx context.Context) ([]string, error)
}

// leaseReconciler is kube's lease endpoint reconciler: each server keeps
// <prefix>/masterleases/<ip> alive through an etcd lease with a TTL, and a
// server that stops renewing drops out when its lease expires.
type leaseReconciler struct {
	client *clientv3.Client
	dir    string // <prefix>/masterleases/
	ip     string
	ttl    int64 // seconds
	lease  clientv3.LeaseID
}

func newLeaseReconciler(c *clientv3.Client, prefix string, ip net.IP, ttlSeconds int64) *leaseReconciler {
	return &leaseReconciler{client: c, dir: path.Join(prefix, "masterleases") + "/", ip: ip.String(), ttl: ttlSeconds}
}

// renew writes the key on a fresh lease, as kube rewrites it with its TTL
// each round, and revokes the previous lease, which no longer holds it.
func (r *leaseReconciler) renew(ctx context.Context) ([]string, error) {
	grant, err := r.client.Grant(ctx, r.ttl)
	if err != nil {
		return nil, err
	}
	ep := corev1.Endpoints{Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: r.ip}}}}}
	ep.Kind, ep.APIVersion, ep.Name = "Endpoints", "v1", r.ip
	val, _ := json.Marshal(&ep)
	if _, err := r.client.Put(ctx, r.dir+r.ip, string(val), clientv3.WithLease(grant.ID)); err != nil {
		return nil, err
	}
	if old := r.lease; old != 0 {
		_, _ = r.client.Revoke(ctx, old)
	}
	r.lease = grant.ID
	return r.list(ctx)
}

func (r *leaseReconciler) remove(ctx context.Context) ([]string, error) {
	if _, err := r.client.Delete(ctx, r.dir+r.ip); err != nil {
		return nil, err
	}
	if old := r.lease; old != 0 {
		_, _ = r.client.Revoke(ctx, old)
		r.lease = 0
	}
	return r.list(ctx)
}

func (r *leaseReconciler) list(ctx context.Context) ([]string, error) {
	resp, err := r.client.Get(ctx, r.dir, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	ips := make([]string, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		ips = append(ips, strings.TrimPrefix(string(kv.Key), r.dir))
	}
	slices.Sort(ips)
	return ips, nil
}
