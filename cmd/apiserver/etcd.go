package main

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/storage/backend"
)

// newEtcdCommand runs one etcd member with etcd's own flag names, so a
// three-member cluster for kpipe replicas needs only this binary.
func newEtcdCommand() *cobra.Command {
	var m backend.Member
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Run one member of an etcd cluster (etcd's flags), for deployments without an etcd binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := newLogger(config.Default().Log)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return backend.RunMember(ctx, m, log.Named("etcd"))
		},
	}
	f := cmd.Flags()
	f.StringVar(&m.Name, "name", "default", "human-readable name for this member")
	f.StringVar(&m.DataDir, "data-dir", "default.etcd", "path to the data directory")
	f.StringSliceVar(&m.ListenClientURLs, "listen-client-urls", []string{"http://127.0.0.1:2379"}, "URLs to listen on for client traffic")
	f.StringSliceVar(&m.AdvertiseClientURLs, "advertise-client-urls", []string{"http://127.0.0.1:2379"}, "this member's client URLs to advertise to the cluster")
	f.StringSliceVar(&m.ListenPeerURLs, "listen-peer-urls", []string{"http://127.0.0.1:2380"}, "URLs to listen on for peer traffic")
	f.StringSliceVar(&m.InitialAdvertisePeerURLs, "initial-advertise-peer-urls", []string{"http://127.0.0.1:2380"}, "this member's peer URLs to advertise to the cluster")
	f.StringVar(&m.InitialCluster, "initial-cluster", "", "initial cluster configuration: name=peerURL,... (default: this member alone)")
	f.StringVar(&m.InitialClusterState, "initial-cluster-state", "new", "new or existing")
	f.StringVar(&m.InitialClusterToken, "initial-cluster-token", "etcd-cluster", "initial cluster token, unique per cluster")
	f.StringVar(&m.CertFile, "cert-file", "", "client server TLS certificate file")
	f.StringVar(&m.KeyFile, "key-file", "", "client server TLS key file")
	f.StringVar(&m.TrustedCAFile, "trusted-ca-file", "", "CA that verifies client certificates")
	f.BoolVar(&m.ClientCertAuth, "client-cert-auth", false, "require client certificates")
	f.StringVar(&m.PeerCertFile, "peer-cert-file", "", "peer TLS certificate file")
	f.StringVar(&m.PeerKeyFile, "peer-key-file", "", "peer TLS key file")
	f.StringVar(&m.PeerTrustedCAFile, "peer-trusted-ca-file", "", "CA that verifies peer certificates")
	f.BoolVar(&m.PeerClientCertAuth, "peer-client-cert-auth", false, "require peer client certificates")
	f.UintVar(&m.HeartbeatInterval, "heartbeat-interval", 100, "time (in milliseconds) of a heartbeat interval")
	f.UintVar(&m.ElectionTimeout, "election-timeout", 1000, "time (in milliseconds) for an election to timeout")
	return cmd
}
