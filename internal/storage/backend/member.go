package backend

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Member is one member of an etcd cluster, spelled as etcd's own flags:
// `apiserver etcd` runs it, so a deployment needs no second binary.
type Member struct {
	Name                     string
	DataDir                  string
	ListenClientURLs         []string
	AdvertiseClientURLs      []string
	ListenPeerURLs           []string
	InitialAdvertisePeerURLs []string
	InitialCluster           string
	InitialClusterState      string // new or existing
	InitialClusterToken      string
	// TLS for clients and peers; empty files mean plain HTTP.
	CertFile, KeyFile, TrustedCAFile             string
	ClientCertAuth                               bool
	PeerCertFile, PeerKeyFile, PeerTrustedCAFile string
	PeerClientCertAuth                           bool
	// Raft timing in milliseconds; 0 keeps etcd's 100 and 1000.
	HeartbeatInterval, ElectionTimeout uint
}

// RunMember runs the member until ctx ends or etcd fails.
func RunMember(ctx context.Context, m Member, log *zap.Logger) error {
	cfg := embed.NewConfig()
	cfg.Name = m.Name
	cfg.Dir = m.DataDir
	var err error
	parse := func(flag string, raw []string) []url.URL {
		if err != nil {
			return nil
		}
		var out []url.URL
		for _, r := range raw {
			for _, s := range strings.Split(r, ",") {
				u, perr := url.Parse(strings.TrimSpace(s))
				if perr != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
					err = fmt.Errorf("--%s: %q is not an http:// or https:// URL", flag, s)
					return nil
				}
				out = append(out, *u)
			}
		}
		return out
	}
	cfg.ListenClientUrls = parse("listen-client-urls", m.ListenClientURLs)
	cfg.AdvertiseClientUrls = parse("advertise-client-urls", m.AdvertiseClientURLs)
	cfg.ListenPeerUrls = parse("listen-peer-urls", m.ListenPeerURLs)
	cfg.AdvertisePeerUrls = parse("initial-advertise-peer-urls", m.InitialAdvertisePeerURLs)
	if err != nil {
		return err
	}
	switch m.InitialClusterState {
	case "new", "existing":
		cfg.ClusterState = m.InitialClusterState
	default:
		return fmt.Errorf("--initial-cluster-state: must be new or existing, got %q", m.InitialClusterState)
	}
	cfg.InitialCluster = m.InitialCluster
	if cfg.InitialCluster == "" {
		cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	}
	if m.InitialClusterToken != "" {
		cfg.InitialClusterToken = m.InitialClusterToken
	}
	cfg.ClientTLSInfo.CertFile, cfg.ClientTLSInfo.KeyFile = m.CertFile, m.KeyFile
	cfg.ClientTLSInfo.TrustedCAFile, cfg.ClientTLSInfo.ClientCertAuth = m.TrustedCAFile, m.ClientCertAuth
	cfg.PeerTLSInfo.CertFile, cfg.PeerTLSInfo.KeyFile = m.PeerCertFile, m.PeerKeyFile
	cfg.PeerTLSInfo.TrustedCAFile, cfg.PeerTLSInfo.ClientCertAuth = m.PeerTrustedCAFile, m.PeerClientCertAuth
	if m.HeartbeatInterval != 0 {
		cfg.TickMs = m.HeartbeatInterval
	}
	if m.ElectionTimeout != 0 {
		cfg.ElectionMs = m.ElectionTimeout
	}
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(quiet(log, zapcore.InfoLevel))
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
	defer e.Close()
	select {
	case <-ctx.Done():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("etcd member %s: %w", m.Name, err)
	}
}
