package main

import (
	"context"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/server"
	"github.com/kpipe/kpipe/plugins"
)

func newServeCommand() *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the API (the default)",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().StringVar(&file, "config", "", "config file (default: ./"+config.DefaultFile+" when it exists)")
	flags := config.BindFlags(cmd.Flags())
	cmd.RunE = func(*cobra.Command, []string) error {
		o := config.Options{File: file}
		flags.Apply(&o)
		return serve(o)
	}
	return cmd
}

func serve(o config.Options) error {
	t := time.Now()
	loaded, err := config.Load(o)
	if err != nil {
		return err
	}
	log, err := newLogger(loaded.Log)
	if err != nil {
		return err
	}
	defer log.Sync() //nolint:errcheck // stderr may not sync
	if loaded.File == "" {
		log.Info("no config file; running on defaults")
	}

	s := server.New(server.Options{
		Config:         loaded,
		Plugins:        plugins.Registry(),
		Log:            log,
		ConfigDuration: time.Since(t),
		Reload:         func() (*config.Loaded, error) { return config.Load(o) },
	})

	signals := make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(signals)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// A signal during start aborts it.
		for sig := range signals {
			if sig != syscall.SIGHUP {
				cancel()
				return
			}
		}
	}()
	if err := s.Start(ctx); err != nil {
		return err
	}
	signal.Stop(signals)
	signals = make(chan os.Signal, 2)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go logReady(s.Loopback(), log)

	shutdownDone := make(chan error, 1)
	stopping := false
	for {
		select {
		case sig := <-signals:
			switch {
			case sig == syscall.SIGHUP:
				log.Info("SIGHUP: reloading the config")
				_ = s.Reload()
			case !stopping:
				stopping = true
				log.Info("signal received: shutting down; a second signal forces the exit", zap.String("signal", sig.String()))
				go func() { shutdownDone <- s.Shutdown() }()
			default:
				log.Warn("second signal: exiting now", zap.String("signal", sig.String()))
				os.Exit(1)
			}
		case err := <-s.Served():
			if err != nil {
				return err
			}
		case err := <-shutdownDone:
			return err
		}
	}
}

// logReady logs how long after the process started /readyz first
// answered 200: the start-up figure operators watch.
func logReady(cfg *rest.Config, log *zap.Logger) {
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return
	}
	client := &http.Client{Transport: rt, Timeout: time.Second}
	for i := 0; i < 600; i++ {
		resp, err := client.Get(cfg.Host + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				log.Info("ready", zap.Duration("sinceProcessStart", time.Since(processStart)))
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func newLogger(c config.Log) (*zap.Logger, error) {
	var level zapcore.Level
	if err := level.UnmarshalText([]byte(c.Level)); err != nil {
		return nil, err
	}
	var zc zap.Config
	if c.Format == "console" {
		zc = zap.NewDevelopmentConfig()
	} else {
		zc = zap.NewProductionConfig()
		zc.EncoderConfig.TimeKey = "time"
		zc.EncoderConfig.EncodeTime = zapcore.ISO8601TimeEncoder
	}
	zc.Level = zap.NewAtomicLevelAt(level)
	// Errors are explained by their messages; stack traces are for panics.
	zc.DisableStacktrace = true
	zc.Sampling = nil
	return zc.Build()
}
