package audit

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kpipe/kpipe/config"
)

// The webhook backend's modes, as kube's --audit-webhook-mode.
const (
	// ModeBatch buffers events and sends them in batches from a goroutine.
	ModeBatch = "batch"
	// ModeBlocking sends each event before the request goes on, and
	// ignores a failure.
	ModeBlocking = "blocking"
	// ModeBlockingStrict is ModeBlocking, except that a failure at the
	// RequestReceived stage fails the request.
	ModeBlockingStrict = "blocking-strict"
)

var allowedModes = []string{ModeBatch, ModeBlocking, ModeBlockingStrict}

// kube-apiserver's defaults (k8s.io/apiserver/pkg/server/options/audit.go).
const (
	defaultBatchBufferSize    = 10000
	defaultBatchMaxSize       = 400
	defaultBatchMaxWait       = 30 * time.Second
	defaultBatchThrottleQPS   = 10
	defaultBatchThrottleBurst = 15
	defaultInitialBackoff     = 10 * time.Second
	// webhookTimeout bounds one POST, body included, as kube's webhook client.
	webhookTimeout = 30 * time.Second
	// defaultTruncateMaxBatchSize and defaultTruncateMaxEventSize are in bytes.
	defaultTruncateMaxBatchSize = 10 << 20
	defaultTruncateMaxEventSize = 100 << 10
)

// WebhookConfig is the webhook backend: kube's --audit-webhook-* flags.
type WebhookConfig struct {
	// ConfigFile is a kubeconfig naming the receiver (its server URL, CA
	// and client credentials); --audit-webhook-config-file. Empty: no
	// webhook backend.
	ConfigFile string `koanf:"configFile"`
	// Mode is batch, blocking or blocking-strict (--audit-webhook-mode).
	Mode string `koanf:"mode"`
	// InitialBackoff is the wait before the first retry of a failed POST
	// (--audit-webhook-initial-backoff).
	InitialBackoff config.Duration `koanf:"initialBackoff"`
	// Version is the API version of the events sent (--audit-webhook-version).
	Version string `koanf:"version"`
	// The batch mode's settings (--audit-webhook-batch-*).
	BatchBufferSize     int             `koanf:"batchBufferSize"`
	BatchMaxSize        int             `koanf:"batchMaxSize"`
	BatchMaxWait        config.Duration `koanf:"batchMaxWait"`
	BatchThrottleEnable bool            `koanf:"batchThrottleEnable"`
	BatchThrottleQPS    float64         `koanf:"batchThrottleQPS"`
	BatchThrottleBurst  int             `koanf:"batchThrottleBurst"`
	// The truncation of large events (--audit-webhook-truncate-*).
	TruncateEnabled      bool  `koanf:"truncateEnabled"`
	TruncateMaxBatchSize int64 `koanf:"truncateMaxBatchSize"`
	TruncateMaxEventSize int64 `koanf:"truncateMaxEventSize"`

	rest *rest.Config // loaded at Validate
}

func defaultWebhookConfig() WebhookConfig {
	return WebhookConfig{
		Mode:                ModeBatch,
		InitialBackoff:      defaultInitialBackoff,
		Version:             GroupVersion,
		BatchBufferSize:     defaultBatchBufferSize,
		BatchMaxSize:        defaultBatchMaxSize,
		BatchMaxWait:        defaultBatchMaxWait,
		BatchThrottleEnable: true,
		BatchThrottleQPS:    defaultBatchThrottleQPS,
		BatchThrottleBurst:  defaultBatchThrottleBurst,

		TruncateMaxBatchSize: defaultTruncateMaxBatchSize,
		TruncateMaxEventSize: defaultTruncateMaxEventSize,
	}
}

func (w *WebhookConfig) enabled() bool { return w.ConfigFile != "" }

// validate checks the block as kube checks its flags, with kube's
// messages, and loads the kubeconfig.
func (w *WebhookConfig) validate() error {
	if !w.enabled() {
		return nil
	}
	fe := func(key, format string, a ...any) error {
		return &config.FieldError{Key: "webhook." + key, Msg: fmt.Sprintf(format, a...)}
	}
	known := false
	for _, m := range allowedModes {
		known = known || m == w.Mode
	}
	if !known {
		return fe("mode", "invalid audit webhook mode %s, allowed modes are %q", w.Mode, strings.Join(allowedModes, ","))
	}
	if w.Mode == ModeBatch {
		switch {
		case w.BatchBufferSize <= 0:
			return fe("batchBufferSize", "invalid audit batch webhook buffer size %v, must be a positive number", w.BatchBufferSize)
		case w.BatchMaxSize <= 0:
			return fe("batchMaxSize", "invalid audit batch webhook max batch size %v, must be a positive number", w.BatchMaxSize)
		case w.BatchMaxWait <= 0:
			return fe("batchMaxWait", "must be positive")
		case w.BatchThrottleEnable && w.BatchThrottleQPS <= 0:
			return fe("batchThrottleQPS", "invalid audit batch webhook throttle QPS %v, must be a positive number", w.BatchThrottleQPS)
		case w.BatchThrottleEnable && w.BatchThrottleBurst <= 0:
			return fe("batchThrottleBurst", "invalid audit batch webhook throttle burst %v, must be a positive number", w.BatchThrottleBurst)
		}
	}
	// kube checks these whether truncation is on or not.
	if w.TruncateMaxEventSize <= 0 {
		return fe("truncateMaxEventSize", "invalid audit truncate webhook max event size %v, must be a positive number", w.TruncateMaxEventSize)
	}
	if w.TruncateMaxBatchSize < w.TruncateMaxEventSize {
		return fe("truncateMaxBatchSize", "invalid audit truncate webhook max batch size %v, must be greater than max event size (%v)", w.TruncateMaxBatchSize, w.TruncateMaxEventSize)
	}
	if w.Version != GroupVersion {
		return fe("version", "invalid group version, allowed versions are %q", []string{GroupVersion})
	}
	if w.InitialBackoff <= 0 {
		return fe("initialBackoff", "must be positive")
	}
	rc, err := loadKubeconfig(w.ConfigFile)
	if err != nil {
		return fe("configFile", "%s: %v", w.ConfigFile, err)
	}
	w.rest = rc
	return nil
}

// loadKubeconfig reads the receiver's kubeconfig (its current context), as
// kube's webhook client does, with kube's 30 s request timeout and no
// client-side rate limit.
func loadKubeconfig(path string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	rc.Timeout = webhookTimeout
	rc.QPS = -1
	if rc.UserAgent == "" {
		rc.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rc, nil
}
