package config

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// flagKeys are the command-line flags, spelled as kube-apiserver spells
// them, and the keys they set.
var flagKeys = []struct {
	flag, key, usage string
}{
	{"state-dir", "stateDir", "directory for everything the server writes: pki/, etcd/, admin.kubeconfig"},
	{"bind-address", "server.bindAddress", "IP address to listen on for the secure port"},
	{"secure-port", "server.securePort", "port to serve HTTPS on"},
	{"advertise-address", "server.advertiseAddress", "IP address other members of the cluster reach this server on"},
	{"permit-port-sharing", "server.permitPortSharing", "set SO_REUSEPORT on the listener so several processes can share the port"},
	{"permit-address-sharing", "server.permitAddressSharing", "set SO_REUSEADDR on the listener"},
	{"http2-max-streams-per-connection", "server.http2MaxStreamsPerConnection", "HTTP/2 max concurrent streams per connection"},
	{"shutdown-delay-duration", "server.shutdownDelayDuration", "time to keep serving after /readyz turns red on shutdown"},
	{"shutdown-timeout", "server.shutdownTimeout", "time allowed for in-flight requests to drain on shutdown"},
	{"profiling", "server.profiling", "serve /debug/pprof (authorized as a non-resource URL)"},
	{"tls-cert-file", "tls.certFile", "serving certificate file (PEM); generated under stateDir/pki when empty"},
	{"tls-private-key-file", "tls.privateKeyFile", "serving private key file (PEM)"},
	{"client-ca-file", "tls.clientCAFile", "CA bundle that verifies client certificates"},
	{"tls-min-version", "tls.minVersion", "minimum TLS version: VersionTLS12 or VersionTLS13"},
	{"tls-cipher-suites", "tls.cipherSuites", "comma-separated cipher suites; empty means Go's secure defaults"},
	{"etcd-servers", "storage.etcd.endpoints", "comma-separated etcd URLs; empty runs an embedded etcd"},
	{"etcd-cafile", "storage.etcd.caFile", "CA file that verifies etcd's serving certificate"},
	{"etcd-certfile", "storage.etcd.certFile", "client certificate for etcd"},
	{"etcd-keyfile", "storage.etcd.keyFile", "client key for etcd"},
	{"etcd-prefix", "storage.prefix", "prefix of every key in etcd"},
	{"event-ttl", "storage.eventTTL", "how long events are kept"},
	{"watch-cache", "storage.watchCache.enabled", "serve lists, watches and resourceVersion=0 gets from memory"},
	{"encryption-provider-config", "storage.encryptionProviderConfig", "EncryptionConfiguration file: which resources are encrypted at rest, and how"},
	{"service-cluster-ip-range", "services.clusterIPRange", "CIDR from which Service cluster IPs are allocated"},
	{"service-node-port-range", "services.nodePortRange", "port range for NodePort Services"},
	{"service-account-issuer", "serviceAccount.issuer", "iss of issued service account tokens"},
	{"api-audiences", "serviceAccount.apiAudiences", "comma-separated audiences the API accepts tokens for; empty means the issuer"},
	{"service-account-signing-key-file", "serviceAccount.signingKeyFile", "private key that signs service account tokens; generated under stateDir/pki when empty"},
	{"service-account-key-file", "serviceAccount.keyFiles", "comma-separated files of public keys that verify service account tokens"},
	{"service-account-max-token-expiration", "serviceAccount.maxTokenExpiration", "longest TokenRequest duration; 0 is no cap"},
	{"log-level", "log.level", "debug, info, warn or error"},
	{"log-format", "log.format", "json or console"},
}

// Flags binds the config flags on a flag set and reads back the ones set.
type Flags struct {
	fs *pflag.FlagSet
}

// BindFlags registers every config flag on fs, with the defaults as help.
func BindFlags(fs *pflag.FlagSet) *Flags {
	defaults := map[string]any{}
	for _, kv := range Keys(Default()) {
		defaults[kv.Key] = kv.Value
	}
	for _, f := range flagKeys {
		switch d := defaults[f.key].(type) {
		case bool:
			fs.Bool(f.flag, d, f.usage)
		case int:
			fs.Int(f.flag, d, f.usage)
		case time.Duration:
			fs.Duration(f.flag, d, f.usage)
		case []string:
			fs.StringSlice(f.flag, d, f.usage)
		case string:
			fs.String(f.flag, d, f.usage)
		default:
			panic(fmt.Sprintf("config: flag --%s: unsupported type %T for key %s", f.flag, d, f.key))
		}
	}
	return &Flags{fs: fs}
}

// Apply adds the flags the user set to o, in the form Load expects.
func (f *Flags) Apply(o *Options) {
	o.Flags = map[string]any{}
	o.FlagNames = map[string]string{}
	for _, fk := range flagKeys {
		fl := f.fs.Lookup(fk.flag)
		if fl == nil || !fl.Changed {
			continue
		}
		var v any
		switch fl.Value.Type() {
		case "stringSlice":
			s, _ := f.fs.GetStringSlice(fk.flag)
			items := make([]any, len(s))
			for i := range s {
				items[i] = s[i]
			}
			v = items
		default:
			// Everything else round-trips through its string form, which
			// Decode parses with the same rules as the file's values.
			v = fl.Value.String()
		}
		o.Flags[fk.key] = v
		o.FlagNames[fk.key] = "flag --" + fk.flag
	}
}
