package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/server/certs"
	"github.com/kpipe/kpipe/internal/serviceaccount"
)

func newPKICommand() *cobra.Command {
	cmd := &cobra.Command{Use: "pki", Short: "Make the certificates for several replicas"}
	var (
		c          certs.Cluster
		replicas   int
		members    int
		serviceIPs string
	)
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create a CA, a client CA, serving certificates for N replicas, admin.kubeconfig and (optionally) etcd's PKI",
		Long: `init writes one PKI that several kpipe replicas share: ca.crt (what clients
trust), client-ca.crt (what replicas trust for client certificates),
apiserver-<i>.crt/.key for each replica, admin.kubeconfig
(kubernetes-admin, system:masters) pointing at --server, and sa.key/sa.pub,
the pair every replica signs and verifies service account tokens with
(--service-account-signing-key-file, --service-account-key-file). With
--etcd-members it also writes etcd-ca.crt, etcd-<i>.crt/.key (serving and
peer) and apiserver-etcd-client.crt/.key. Existing files that are still
good are kept, so the CAs do not change when it runs again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if replicas < 1 {
				return fmt.Errorf("--replicas: must be at least 1, got %d", replicas)
			}
			if members < 0 {
				return fmt.Errorf("--etcd-members: must not be negative, got %d", members)
			}
			pfx, err := config.ServiceCIDR(serviceIPs)
			if err != nil {
				return fmt.Errorf("--service-cluster-ip-range: %v", err)
			}
			c.ServiceIP = net.IP(pfx.Addr().Next().AsSlice())
			for i := range replicas {
				c.Replicas = append(c.Replicas, fmt.Sprintf("apiserver-%d", i))
			}
			for i := range members {
				c.EtcdMembers = append(c.EtcdMembers, fmt.Sprintf("etcd-%d", i))
			}
			if c.Server == "" {
				host := "localhost"
				if len(c.Hosts) > 0 {
					host = c.Hosts[0]
				}
				c.Server = "https://" + net.JoinHostPort(host, "6443")
			}
			made, err := c.Init()
			if err != nil {
				return err
			}
			sa, err := writeServiceAccountKeys(c.Dir)
			if err != nil {
				return err
			}
			made = append(made, sa...)
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s under %s\n", strings.Join(made, ", "), c.Dir)
			return nil
		},
	}
	f := initCmd.Flags()
	f.StringVar(&c.Dir, "dir", "pki", "directory to write the files to")
	f.IntVar(&replicas, "replicas", 3, "number of API server replicas (apiserver-0 ... apiserver-N-1)")
	f.StringSliceVar(&c.Hosts, "hosts", nil, "extra names and addresses on every replica's certificate: the load balancer's")
	f.StringVar(&c.Server, "server", "", "URL in admin.kubeconfig (default https://<first --hosts>:6443)")
	f.IntVar(&members, "etcd-members", 0, "number of etcd members (etcd-0 ...) to make certificates for")
	f.StringSliceVar(&c.EtcdHosts, "etcd-hosts", nil, "extra names and addresses on every etcd member's certificate")
	f.StringVar(&serviceIPs, "service-cluster-ip-range", config.Default().Services.ClusterIPRange, "the Services' range; its first IP is on every certificate")
	cmd.AddCommand(initCmd)
	return cmd
}

// writeServiceAccountKeys makes dir/sa.key and dir/sa.pub, or keeps them:
// replicas that each generated their own key would refuse one another's
// tokens, and a new key would void every token already issued.
func writeServiceAccountKeys(dir string) ([]string, error) {
	if _, _, err := serviceaccount.LoadOrCreateKey(dir); err != nil {
		return nil, fmt.Errorf("service account key: %w", err)
	}
	return []string{serviceaccount.GeneratedKey, serviceaccount.GeneratedPubKey}, nil
}
