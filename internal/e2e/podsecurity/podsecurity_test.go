package podsecurity

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
	"github.com/kpipe/kpipe/internal/testserver"
	"github.com/kpipe/kpipe/plugins/audit"
)

// restrictedDetail is kube's list of what a plain one-container pod
// ("app") lacks under restricted.
const restrictedDetail = `allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false), ` +
	`unrestricted capabilities (container "app" must set securityContext.capabilities.drop=["ALL"]), ` +
	`runAsNonRoot != true (pod or container "app" must set securityContext.runAsNonRoot=true), ` +
	`seccompProfile (pod or container "app" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")`

const privilegedDetail = `privileged (container "app" must not set securityContext.privileged=true)`

// server starts kpipe with PodSecurity in the validating list (kube's
// place, after ServiceAccount), the given plugin config, and an audit log
// of every write at Metadata level.
func server(t *testing.T, psa map[string]any) (*testserver.TestServer, string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "audit.log")
	ts := testserver.Start(t, testserver.Options{Configure: func(c *config.Config) {
		for i, e := range c.Pipeline {
			switch e.Name {
			case "audit":
				c.Pipeline[i].Config = map[string]any{"logPath": logPath, "policy": map[string]any{
					"apiVersion": "audit.k8s.io/v1", "kind": "Policy",
					"omitStages": []any{"RequestReceived"},
					"rules": []any{
						map[string]any{"level": "None", "verbs": []any{"get", "list", "watch"}},
						map[string]any{"level": "Metadata"},
					},
				}}
			case "validating-admission":
				c.Pipeline[i].Config = map[string]any{"plugins": []any{
					map[string]any{"name": "NamespaceLifecycle"},
					map[string]any{"name": "LimitRanger"},
					map[string]any{"name": "ServiceAccount"},
					map[string]any{"name": "PodSecurity", "config": psa},
					map[string]any{"name": "Priority"},
					map[string]any{"name": "ResourceQuota"},
				}}
			}
		}
	}})
	return ts, logPath
}

func clients(t *testing.T, cfg *rest.Config) (kubernetes.Interface, *e2eutil.Warnings) {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	w := &e2eutil.Warnings{}
	cfg.WarningHandler = w
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, w
}

// namespace makes a namespace with PodSecurity labels (mode, level, ...)
// and waits for its default ServiceAccount, which pods need.
func namespace(t *testing.T, cs kubernetes.Interface, name string, labels ...string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for i := 0; i+1 < len(labels); i += 2 {
		ns.Labels["pod-security.kubernetes.io/"+labels[i]] = labels[i+1]
	}
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the default ServiceAccount in "+name, func() bool {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func pod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx:1.27"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func privileged(p *corev1.Pod) {
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
}

func compliant(p *corev1.Pod) {
	p.Spec.SecurityContext = &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func wantWarnings(t *testing.T, w *e2eutil.Warnings, want ...string) {
	t.Helper()
	if got := w.Take(); !reflect.DeepEqual(got, want) {
		t.Errorf("warnings\n got %q\nwant %q", got, want)
	}
}

// annotations waits for the audit event of a create (verb, resource,
// name) and returns its PodSecurity annotations.
func annotations(t *testing.T, logPath, verb, resource, namespace, name string) map[string]string {
	t.Helper()
	var got map[string]string
	eventually(t, "the audit event of "+verb+" "+resource+" "+namespace+"/"+name, func() bool {
		f, err := os.Open(logPath)
		if err != nil {
			return false
		}
		defer f.Close()
		r := bufio.NewReader(f)
		for {
			line, err := r.ReadBytes('\n')
			if err == io.EOF {
				return false
			}
			if err != nil {
				t.Fatal(err)
			}
			var ev audit.Event
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("audit line %q: %v", line, err)
			}
			if ev.Stage == audit.StageResponseComplete && ev.Verb == verb && ev.ObjectRef != nil &&
				ev.ObjectRef.Resource == resource && ev.ObjectRef.Namespace == namespace && ev.ObjectRef.Name == name {
				got = map[string]string{}
				for k, v := range ev.Annotations {
					if strings.HasPrefix(k, "pod-security.kubernetes.io/") {
						got[k] = v
					}
				}
				return true
			}
		}
	})
	return got
}

func wantForbidden(t *testing.T, err error, msg string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403 Forbidden, got %v", err)
	}
	if err.Error() != msg {
		t.Errorf("message\n got %q\nwant %q", err.Error(), msg)
	}
}

func TestPodSecurity(t *testing.T) {
	ts, logPath := server(t, map[string]any{
		"defaults": map[string]any{"audit": "baseline"},
		"exemptions": map[string]any{
			"usernames":      []any{"ci-bot"},
			"namespaces":     []any{"psa-exempt"},
			"runtimeClasses": []any{"kata"},
		},
	})
	cs, w := clients(t, ts.Config)
	ctx := context.Background()

	t.Run("enforce=restricted refuses a privileged pod with kube's message", func(t *testing.T) {
		namespace(t, cs, "psa-enforce", "enforce", "restricted")
		w.Take()
		_, err := cs.CoreV1().Pods("psa-enforce").Create(ctx, pod("priv", privileged), metav1.CreateOptions{})
		wantForbidden(t, err, `pods "priv" is forbidden: violates PodSecurity "restricted:latest": `+privilegedDetail+", "+restrictedDetail)
		wantWarnings(t, w) // kube does not warn on a request it rejects
		if got, want := annotations(t, logPath, "create", "pods", "psa-enforce", "priv"), map[string]string{
			"pod-security.kubernetes.io/enforce-policy":   "restricted:latest",
			"pod-security.kubernetes.io/audit-violations": `would violate PodSecurity "baseline:latest": ` + privilegedDetail,
		}; !reflect.DeepEqual(got, want) {
			t.Errorf("audit annotations\n got %q\nwant %q", got, want)
		}

		if _, err := cs.CoreV1().Pods("psa-enforce").Create(ctx, pod("ok", compliant), metav1.CreateOptions{}); err != nil {
			t.Fatalf("a compliant pod: %v", err)
		}
		wantWarnings(t, w)
		if got, want := annotations(t, logPath, "create", "pods", "psa-enforce", "ok"), map[string]string{
			"pod-security.kubernetes.io/enforce-policy": "restricted:latest",
		}; !reflect.DeepEqual(got, want) {
			t.Errorf("audit annotations\n got %q\nwant %q", got, want)
		}
	})

	t.Run("warn gives kube's Warning headers", func(t *testing.T) {
		namespace(t, cs, "psa-warn", "warn", "restricted")
		w.Take()
		if _, err := cs.CoreV1().Pods("psa-warn").Create(ctx, pod("plain"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		wantWarnings(t, w, `would violate PodSecurity "restricted:latest": `+restrictedDetail)
	})

	t.Run("a Deployment in an enforce=restricted namespace is created with a warning", func(t *testing.T) {
		w.Take()
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web"},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
					Spec:       pod("").Spec,
				},
			},
		}
		if _, err := cs.AppsV1().Deployments("psa-enforce").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the deployment: %v", err)
		}
		// enforce restricted defaults warn to restricted.
		wantWarnings(t, w, `would violate PodSecurity "restricted:latest": `+restrictedDetail)
		if got, want := annotations(t, logPath, "create", "deployments", "psa-enforce", "web"), map[string]string{}; !reflect.DeepEqual(got, want) {
			t.Errorf("audit annotations\n got %q\nwant %q", got, want)
		}
	})

	t.Run("exemptions from config", func(t *testing.T) {
		namespace(t, cs, "psa-exempt", "enforce", "restricted")
		w.Take()
		if _, err := cs.CoreV1().Pods("psa-exempt").Create(ctx, pod("priv", privileged), metav1.CreateOptions{}); err != nil {
			t.Fatalf("exempt namespace: %v", err)
		}
		if got := annotations(t, logPath, "create", "pods", "psa-exempt", "priv")["pod-security.kubernetes.io/exempt"]; got != "namespace" {
			t.Errorf("exempt annotation %q, want namespace", got)
		}

		if _, err := cs.CoreV1().Pods("psa-enforce").Create(ctx, pod("kata", privileged, func(p *corev1.Pod) {
			p.Spec.RuntimeClassName = ptr.To("kata")
		}), metav1.CreateOptions{}); err != nil {
			t.Fatalf("exempt runtime class: %v", err)
		}
		if got := annotations(t, logPath, "create", "pods", "psa-enforce", "kata")["pod-security.kubernetes.io/exempt"]; got != "runtimeClass" {
			t.Errorf("exempt annotation %q, want runtimeClass", got)
		}

		bot := rest.CopyConfig(ts.Config)
		bot.Impersonate = rest.ImpersonationConfig{UserName: "ci-bot", Groups: []string{"system:masters"}}
		botCS, _ := clients(t, bot)
		if _, err := botCS.CoreV1().Pods("psa-enforce").Create(ctx, pod("bot", privileged), metav1.CreateOptions{}); err != nil {
			t.Fatalf("exempt user: %v", err)
		}
		if got := annotations(t, logPath, "create", "pods", "psa-enforce", "bot")["pod-security.kubernetes.io/exempt"]; got != "user" {
			t.Errorf("exempt annotation %q, want user", got)
		}
		wantWarnings(t, w)
	})

	t.Run("a pod update is evaluated when its images change, not its labels", func(t *testing.T) {
		// "bot" is privileged, let in by the exempt user; admin is not exempt.
		p, err := cs.CoreV1().Pods("psa-enforce").Get(ctx, "bot", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Labels = map[string]string{"touched": "yes"}
		if p, err = cs.CoreV1().Pods("psa-enforce").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("a label update: %v", err)
		}
		p.Spec.Containers[0].Image = "nginx:1.28"
		_, err = cs.CoreV1().Pods("psa-enforce").Update(ctx, p, metav1.UpdateOptions{})
		wantForbidden(t, err, `pods "bot" is forbidden: violates PodSecurity "restricted:latest": `+privilegedDetail+", "+restrictedDetail)
	})

	t.Run("an invalid label value is refused", func(t *testing.T) {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: "psa-bad", Labels: map[string]string{"pod-security.kubernetes.io/enforce": "strict"},
		}}, metav1.CreateOptions{})
		if !apierrors.IsInvalid(err) {
			t.Fatalf("want 422 Invalid, got %v", err)
		}
		if want := `Namespace "psa-bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted`; err.Error() != want {
			t.Errorf("message\n got %q\nwant %q", err.Error(), want)
		}
		ns, err := cs.CoreV1().Namespaces().Get(ctx, "psa-warn", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Labels["pod-security.kubernetes.io/warn-version"] = "1.30"
		_, err = cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.30": must be "latest" or "v1.x"`) {
			t.Fatalf("want 422 Invalid for the version, got %v", err)
		}
	})

	t.Run("labeling a namespace with violating pods warns about them", func(t *testing.T) {
		namespace(t, cs, "psa-label")
		for _, p := range []*corev1.Pod{pod("priv-b", privileged), pod("priv-a", privileged), pod("hostnet", func(p *corev1.Pod) { p.Spec.HostNetwork = true }), pod("fine")} {
			if _, err := cs.CoreV1().Pods("psa-label").Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// The plugin reads pods from the watch cache, as kube's from its
		// informer: wait until the cache has them all.
		eventually(t, "the pods in the watch cache", func() bool {
			l, err := cs.CoreV1().Pods("psa-label").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			return err == nil && len(l.Items) == 4
		})
		w.Take()
		ns, err := cs.CoreV1().Namespaces().Get(ctx, "psa-label", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Labels["pod-security.kubernetes.io/enforce"] = "baseline"
		if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("the label is accepted: %v", err)
		}
		wantWarnings(t, w,
			`existing pods in namespace "psa-label" violate the new PodSecurity enforce level "baseline:latest"`,
			`hostnet: host namespaces`,
			`priv-a (and 1 other pod): privileged`,
		)
		// Relaxing it checks nothing.
		ns, err = cs.CoreV1().Namespaces().Get(ctx, "psa-label", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ns.Labels["pod-security.kubernetes.io/enforce"] = "privileged"
		if _, err := cs.CoreV1().Namespaces().Update(ctx, ns, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		wantWarnings(t, w)
	})

	t.Run("metrics", func(t *testing.T) {
		resp, err := ts.HTTPClient(t).Get(ts.URL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"# TYPE pod_security_evaluations_total counter",
			`pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1`,
			`pod_security_evaluations_total{decision="allow",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""}`,
			`pod_security_evaluations_total{decision="deny",mode="warn",policy_level="restricted",policy_version="latest",request_operation="create",resource="pod",subresource=""} 1`,
			`pod_security_evaluations_total{decision="deny",mode="warn",policy_level="restricted",policy_version="latest",request_operation="create",resource="controller",subresource=""} 1`,
			`pod_security_evaluations_total{decision="deny",mode="audit",policy_level="baseline",policy_version="latest",request_operation="create",resource="pod",subresource=""}`,
			`pod_security_evaluations_total{decision="deny",mode="enforce",policy_level="restricted",policy_version="latest",request_operation="update",resource="pod",subresource=""} 1`,
			"# TYPE pod_security_exemptions_total counter",
			`pod_security_exemptions_total{request_operation="create",resource="pod",subresource=""} 3`,
			`apiserver_admission_controller_admission_duration_seconds_count{name="PodSecurity",operation="CREATE",rejected="true",type="validate"}`,
		} {
			if !strings.Contains(string(b), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}
