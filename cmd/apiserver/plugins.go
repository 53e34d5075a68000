package main

import (
	"fmt"
	"sort"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/plugins"
)

func newPluginsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "plugins",
		Short: "List every registered plugin with its kind, config keys and defaults",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "KIND\tNAME\tDESCRIPTION")
			for _, p := range plugins.Registry().List() {
				fmt.Fprintf(w, "%s\t%s\t%s\n", p.Kind, p.Name, p.Description)
				if p.Config != nil {
					for _, kv := range config.Keys(p.Config()) {
						fmt.Fprintf(w, "\t  %s\tdefault: %v\n", kv.Key, config.ToMap(kv.Value))
					}
				}
				nested := make([]string, 0, len(p.Nested))
				for k := range p.Nested {
					nested = append(nested, k)
				}
				sort.Strings(nested)
				for _, k := range nested {
					fmt.Fprintf(w, "\t  %s\tlist of %s plugins\n", k, p.Nested[k])
				}
			}
			return w.Flush()
		},
	}
}
