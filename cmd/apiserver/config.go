package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/server"
	"github.com/kpipe/kpipe/plugins"
)

func newConfigCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Check or print the configuration",
	}
	cmd.AddCommand(
		configSubcommand("validate", "Check a config file, pipeline included, without starting anything", func(cmd *cobra.Command, l *config.Loaded) error {
			if _, err := plugins.Registry().Plan(l.Config); err != nil {
				return l.Attribute(err)
			}
			if _, err := server.LoadEncryption(l.Config); err != nil {
				return l.Attribute(err)
			}
			name := l.File
			if name == "" {
				name = "the default configuration"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is valid\n", name)
			return nil
		}),
		configSubcommand("print", "Print the effective configuration, defaults filled in", func(cmd *cobra.Command, l *config.Loaded) error {
			out, err := yaml.Marshal(config.ToMap(l.Config))
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(out)
			return err
		}),
	)
	return cmd
}

// configSubcommand takes the same --config and flags as serve, so what it
// checks or prints is what serve would run.
func configSubcommand(use, short string, run func(*cobra.Command, *config.Loaded) error) *cobra.Command {
	var file string
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.NoArgs}
	cmd.Flags().StringVar(&file, "config", "", "config file (default: ./"+config.DefaultFile+" when it exists)")
	flags := config.BindFlags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		o := config.Options{File: file}
		flags.Apply(&o)
		l, err := config.Load(o)
		if err != nil {
			return err
		}
		return run(cmd, l)
	}
	return cmd
}
