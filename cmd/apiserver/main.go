// Command apiserver is kpipe, a Kubernetes-compatible API server whose
// request path is a pipeline of stages declared in apiserver.yaml.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// processStart is when the process began, for the time-to-ready figure.
var processStart = time.Now()

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "apiserver: %v\n", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	serve := newServeCommand()
	root := &cobra.Command{
		Use:   "apiserver",
		Short: "kpipe: a Kubernetes-compatible API server with a declarative request pipeline",
		Long: `kpipe serves the Kubernetes API. Its request path is the ordered list of
stages in apiserver.yaml; run without a subcommand, it serves.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE:          serve.RunE,
	}
	// `apiserver --secure-port 7443` serves, as kube-apiserver does.
	root.Flags().AddFlagSet(serve.Flags())
	root.AddCommand(serve, newConfigCommand(), newPluginsCommand(), newPKICommand(), newEtcdCommand(), newVersionCommand())
	return root
}
