package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kpipe/kpipe/internal/serviceaccount"
)

const deployDir = "../../deploy"

func readDeploy(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parseArgs runs args through the real command tree's flag parsing, as
// the binary would at start, without running anything, and returns the
// command with its flags set.
func parseArgs(t *testing.T, where string, args []string) *cobra.Command {
	t.Helper()
	root := newRootCommand()
	cmd, rest, err := root.Find(args)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("%s: %s: %v", where, cmd.CommandPath(), err)
	}
	if cmd.Args != nil {
		if err := cmd.Args(cmd, cmd.Flags().Args()); err != nil {
			t.Fatalf("%s: %s: %v", where, cmd.CommandPath(), err)
		}
	}
	return cmd
}

// checkServiceAccountKeys fails unless a serve command line signs and
// verifies service account tokens with the pair `pki init` writes: a
// replica left to generate its own key refuses every other's tokens.
func checkServiceAccountKeys(t *testing.T, where string, cmd *cobra.Command) {
	t.Helper()
	signing, _ := cmd.Flags().GetString("service-account-signing-key-file")
	verifying, _ := cmd.Flags().GetStringSlice("service-account-key-file")
	if filepath.Base(signing) != serviceaccount.GeneratedKey {
		t.Errorf("%s: --service-account-signing-key-file is %q; want pki init's %s", where, signing, serviceaccount.GeneratedKey)
	}
	if len(verifying) != 1 || filepath.Base(verifying[0]) != serviceaccount.GeneratedPubKey || filepath.Dir(verifying[0]) != filepath.Dir(signing) {
		t.Errorf("%s: --service-account-key-file is %q; want pki init's %s beside the signing key", where, verifying, serviceaccount.GeneratedPubKey)
	}
}

func TestDeployComposeIsConsistent(t *testing.T) {
	var compose struct {
		Services map[string]struct {
			Image      string   `json:"image"`
			Entrypoint []string `json:"entrypoint"`
			Command    []string `json:"command"`
			Volumes    []string `json:"volumes"`
			Profiles   []string `json:"profiles"`
		} `json:"services"`
	}
	if err := yaml.Unmarshal(readDeploy(t, "compose/compose.yaml"), &compose); err != nil {
		t.Fatal(err)
	}
	var replicas []string
	for name, s := range compose.Services {
		for _, v := range s.Volumes {
			if src, _, ok := strings.Cut(v, ":"); ok && strings.HasPrefix(src, ".") {
				if _, err := os.Stat(filepath.Join(deployDir, "compose", src)); err != nil {
					t.Errorf("service %s mounts %s, which is not in the repository", name, src)
				}
			}
		}
		// The PKI copy steps run install, not kpipe.
		if s.Image != "kpipe:dev" || len(s.Entrypoint) > 0 {
			continue
		}
		cmd := parseArgs(t, "compose service "+name, s.Command)
		if strings.HasPrefix(name, "apiserver-") {
			replicas = append(replicas, name)
			if !slices.Contains(s.Command, "/pki/"+name+".crt") {
				t.Errorf("%s does not serve its own certificate", name)
			}
			checkServiceAccountKeys(t, "compose service "+name, cmd)
		}
	}
	slices.Sort(replicas)
	if len(replicas) != 3 {
		t.Fatalf("compose has replicas %v, want 3", replicas)
	}
	// Every replica is behind the load balancer, and nothing else.
	var servers []string
	for _, line := range strings.Split(string(readDeploy(t, "compose/haproxy.cfg")), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "server" {
			servers = append(servers, f[1])
		}
	}
	slices.Sort(servers)
	if !slices.Equal(servers, replicas) {
		t.Errorf("haproxy balances %v, compose runs %v", servers, replicas)
	}
	// The replicas' config file is valid as serve would load it.
	if out, err := run(t, "config", "validate", "--config", filepath.Join(deployDir, "compose/apiserver.yaml")); err != nil {
		t.Errorf("compose/apiserver.yaml: %v\n%s", err, out)
	}
}

func TestDeployStaticPodsAndUnit(t *testing.T) {
	for _, f := range []string{"kubernetes/kpipe-apiserver.yaml", "kubernetes/etcd.yaml"} {
		var pod corev1.Pod
		if err := yaml.UnmarshalStrict(readDeploy(t, f), &pod); err != nil {
			t.Fatalf("%s is not a valid Pod: %v", f, err)
		}
		if pod.Kind != "Pod" || pod.Namespace != "kube-system" || len(pod.Spec.Containers) != 1 {
			t.Fatalf("%s: %s %s/%s", f, pod.Kind, pod.Namespace, pod.Name)
		}
		cmd := parseArgs(t, f, pod.Spec.Containers[0].Args)
		if cmd.Flags().Lookup("service-account-signing-key-file") != nil { // not the etcd member
			checkServiceAccountKeys(t, f, cmd)
		}
	}
	starts := 0
	for _, line := range strings.Split(string(readDeploy(t, "systemd/kpipe.service")), "\n") {
		if cmdline, ok := strings.CutPrefix(line, "ExecStart="); ok {
			starts++
			checkServiceAccountKeys(t, "systemd ExecStart", parseArgs(t, "systemd ExecStart", strings.Fields(cmdline)[1:]))
		}
	}
	if starts != 1 {
		t.Errorf("systemd/kpipe.service has %d ExecStart lines, want 1", starts)
	}
}

// metricNames are the series names a PromQL expression reads.
var metricRef = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)\{`)

// Every metric the alerts and the dashboard use is one kpipe exports.
func TestDeployMonitoringUsesRealMetrics(t *testing.T) {
	var exprs []string
	var rules struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Expr        string            `json:"expr"`
				For         string            `json:"for"`
				Labels      map[string]string `json:"labels"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(readDeploy(t, "prometheus/alerts.yml"), &rules); err != nil {
		t.Fatal(err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	var dash struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Query any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(readDeploy(t, "grafana/kpipe.json"), &dash); err != nil {
		t.Fatal(err)
	}
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	var prom struct {
		RuleFiles []string `json:"rule_files"`
		Scrape    []struct {
			TLS struct {
				CA   string `json:"ca_file"`
				Cert string `json:"cert_file"`
				Key  string `json:"key_file"`
			} `json:"tls_config"`
		} `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(readDeploy(t, "prometheus/prometheus.yml"), &prom); err != nil {
		t.Fatal(err)
	}
	for _, f := range prom.RuleFiles {
		readDeploy(t, filepath.Join("prometheus", f))
	}

	// A replica with some traffic behind it, scraped with the certificate
	// `pki init` makes for Prometheus: system:monitoring may read /metrics.
	pki := t.TempDir()
	if out, err := run(t, "pki", "init", "--dir", pki, "--replicas", "1"); err != nil {
		t.Fatalf("pki init: %v\n%s", err, out)
	}
	for _, f := range []string{prom.Scrape[0].TLS.CA, prom.Scrape[0].TLS.Cert, prom.Scrape[0].TLS.Key} {
		if _, err := os.Stat(filepath.Join(pki, strings.TrimPrefix(f, "/pki/"))); err != nil {
			t.Errorf("prometheus.yml reads %s, which pki init does not write", f)
		}
	}
	p := startBinary(t, "--client-ca-file", filepath.Join(pki, "client-ca.crt"))
	p.waitReady(t)
	_, cfg := p.client(t)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs.CoreV1().ConfigMaps("default").Get(ctx, "missing", metav1.GetOptions{})

	scrape := *cfg
	scrape.TLSClientConfig.CertData, scrape.TLSClientConfig.KeyData = nil, nil
	scrape.TLSClientConfig.CertFile = filepath.Join(pki, "prometheus.crt")
	scrape.TLSClientConfig.KeyFile = filepath.Join(pki, "prometheus.key")
	pc := kubernetes.NewForConfigOrDie(&scrape)
	body, err := pc.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("scraping /metrics as system:monitoring: %v", err)
	}
	if _, err := pc.CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{}); err == nil {
		t.Error("the monitoring certificate can list configmaps")
	}
	exported := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 4 && f[0] == "#" && f[1] == "TYPE" {
			exported[f[2]] = true
		}
	}
	// Series that exist only once something happened; each is registered by
	// the package named.
	lazy := map[string]string{
		"etcd_request_errors_total": "internal/storage/store: first etcd error",
		"up":                        "Prometheus itself",
	}
	for _, e := range exprs {
		for _, m := range metricRef.FindAllStringSubmatch(e, -1) {
			name := m[1]
			base := name
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				base = strings.TrimSuffix(base, suffix)
			}
			if !exported[name] && !exported[base] && lazy[name] == "" {
				t.Errorf("%s is used by the monitoring files but kpipe does not export it", name)
			}
		}
	}
}
