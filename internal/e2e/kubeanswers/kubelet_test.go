package kubeanswers

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kpipe/kpipe/internal/e2e/e2eutil"
)

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// The pods' log, exec, attach and portforward answer as kube's do when
// the pod has no node, when its node is not there, and when the node's
// kubelet cannot be reached (kpipe has no kubelet proxy yet).
func TestPodKubeletSubresources(t *testing.T) {
	ts, cs := e2eutil.APIServer(t)
	ctx := context.Background()
	const ns = "kubelet"
	e2eutil.Namespace(t, cs, ns)
	e2eutil.WaitDefaultSA(t, cs, ns)
	port := closedPort(t)
	kubelet := fmt.Sprintf("127.0.0.1:%d", port)

	node, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}}
	node.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(port)
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, nodeName string, containers ...string) {
		p := e2eutil.Pod(name, func(p *corev1.Pod) {
			p.Spec.NodeName = nodeName
			p.Spec.Containers = nil
			for _, c := range containers {
				p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "busybox"})
			}
		})
		created, err := cs.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Status.Phase = corev1.PodRunning
		if _, err := cs.CoreV1().Pods(ns).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod("unscheduled", "", "c")
	pod("onnode", "n1", "c")
	pod("multi", "n1", "a", "b")
	pod("ghostnode", "ghost", "c")
	pod("noaddress", "bare", "c")

	refused := "dial tcp " + kubelet + ": connect: connection refused"
	raw := []struct {
		name    string
		method  string
		pod     string
		sub     string
		query   string
		upgrade bool
		code    int
		msg     string
	}{
		{"log of a pod without node", http.MethodGet, "unscheduled", "log", "", false, http.StatusNoContent, ""},
		{"log of an unreachable kubelet", http.MethodGet, "onnode", "log", "?tailLines=5&follow=true", false, http.StatusInternalServerError,
			`Get "https://` + kubelet + `/containerLogs/kubelet/onnode/c?follow=true&tailLines=5": ` + refused},
		{"log of one of two containers, unnamed", http.MethodGet, "multi", "log", "", false, http.StatusBadRequest,
			"a container name must be specified for pod multi, choose one of: [a b]"},
		{"log of a container not in the pod", http.MethodGet, "onnode", "log", "?container=x", false, http.StatusBadRequest,
			"container x is not valid for pod onnode"},
		{"log of a missing pod", http.MethodGet, "missing", "log", "", false, http.StatusNotFound, `pods "missing" not found`},
		{"log by POST", http.MethodPost, "onnode", "log", "", false, http.StatusMethodNotAllowed,
			"the server does not allow this method on the requested resource"},
		{"exec by PUT", http.MethodPut, "onnode", "exec", "", false, http.StatusMethodNotAllowed,
			"the server does not allow this method on the requested resource"},
		{"log with a tailLines that is no number", http.MethodGet, "missing", "log", "?tailLines=x", false, http.StatusBadRequest,
			`strconv.ParseInt: parsing "x": invalid syntax`},
		{"log with a negative tailLines", http.MethodGet, "missing", "log", "?tailLines=-1&limitBytes=0", false, http.StatusUnprocessableEntity,
			`PodLogOptions "missing" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]`},
		{"log since a time and seconds", http.MethodGet, "onnode", "log", "?sinceSeconds=5&sinceTime=2026-01-02T03:04:05Z", false, http.StatusUnprocessableEntity,
			`PodLogOptions "onnode" is invalid: []: Forbidden: at most one of ` + "`sinceTime` or `sinceSeconds`" + ` may be specified`},
		{"log of one stream", http.MethodGet, "onnode", "log", "?stream=Stdout", false, http.StatusUnprocessableEntity,
			`PodLogOptions "onnode" is invalid: stream: Forbidden: may not be specified`},
		{"exec of a missing pod", http.MethodPost, "missing", "exec", "?command=ls", true, http.StatusNotFound, `pods "missing" not found`},
		{"exec of a pod without node", http.MethodPost, "unscheduled", "exec", "?command=ls", true, http.StatusBadRequest,
			"pod unscheduled does not have a host assigned"},
		{"exec on a node that is not there", http.MethodPost, "ghostnode", "exec", "?command=ls", true, http.StatusNotFound, `nodes "ghost" not found`},
		{"exec on a node without addresses", http.MethodPost, "noaddress", "exec", "?command=ls", true, http.StatusInternalServerError,
			"no preferred addresses found; known addresses: []"},
		{"exec without upgrade", http.MethodPost, "onnode", "exec", "?command=ls", false, http.StatusBadRequest, "Upgrade request required"},
		{"exec of an unreachable kubelet", http.MethodGet, "onnode", "exec", "?command=ls&stdout=true", true, http.StatusInternalServerError,
			"error dialing backend: " + refused},
		{"attach of a pod without node", http.MethodPost, "unscheduled", "attach", "", true, http.StatusBadRequest,
			"pod unscheduled does not have a host assigned"},
		{"attach of an unreachable kubelet", http.MethodPost, "multi", "attach", "?container=b", true, http.StatusInternalServerError,
			"error dialing backend: " + refused},
		{"portforward of a pod without node", http.MethodPost, "unscheduled", "portforward", "", true, http.StatusBadRequest,
			"pod unscheduled does not have a host assigned"},
		{"portforward of an unreachable kubelet", http.MethodPost, "multi", "portforward", "?ports=80", true, http.StatusInternalServerError,
			"error dialing backend: " + refused},
	}
	// Upgrades are HTTP/1.1, as kubectl sends them.
	h1 := rest.CopyConfig(ts.Config)
	h1.NextProtos = []string{"http/1.1"}
	hc, err := rest.HTTPClientFor(h1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range raw {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, ts.Config.Host+"/api/v1/namespaces/"+ns+"/pods/"+c.pod+"/"+c.sub+c.query, nil)
			if c.upgrade {
				req.Header.Set("Connection", "Upgrade")
				req.Header.Set("Upgrade", "SPDY/3.1")
			}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Fatalf("code %d, want %d", resp.StatusCode, c.code)
			}
			if c.msg == "" {
				return
			}
			st := &metav1.Status{}
			if err := jsonDecode(resp, st); err != nil {
				t.Fatal(err)
			}
			if st.Message != c.msg || st.Code != int32(c.code) {
				t.Errorf("status %d %q, want %d %q", st.Code, st.Message, c.code, c.msg)
			}
		})
	}

	t.Run("authorized as the subresource", func(t *testing.T) {
		// A user with no role is refused pods/log by name.
		req, _ := http.NewRequest(http.MethodGet, ts.Config.Host+"/api/v1/namespaces/"+ns+"/pods/onnode/log", nil)
		req.Header.Set("Impersonate-User", "reader")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		st := &metav1.Status{}
		if err := jsonDecode(resp, st); err != nil {
			t.Fatal(err)
		}
		want := `pods "onnode" is forbidden: User "reader" cannot get resource "pods/log" in API group "" in the namespace "kubelet"`
		if st.Code != http.StatusForbidden || st.Message != want {
			t.Errorf("status %d %q, want 403 %q", st.Code, st.Message, want)
		}
	})

	t.Run("discovery", func(t *testing.T) {
		list, err := cs.Discovery().ServerResourcesForGroupVersion("v1")
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"pods/log": "Pod [get]", "pods/exec": "PodExecOptions [create get]",
			"pods/attach": "PodAttachOptions [create get]", "pods/portforward": "PodPortForwardOptions [create get]"}
		for _, r := range list.APIResources {
			if w, ok := want[r.Name]; ok {
				if got := fmt.Sprintf("%s %v", r.Kind, r.Verbs); got != w {
					t.Errorf("%s: %s, want %s", r.Name, got, w)
				}
				delete(want, r.Name)
			}
		}
		if len(want) != 0 {
			t.Errorf("not in discovery: %v", want)
		}
	})

	kubectl := []struct {
		name string
		args []string
		fail bool
		want string
	}{
		{"logs of a pod without node", []string{"logs", "-n", ns, "unscheduled"}, false, ""},
		{"logs of an unreachable kubelet", []string{"logs", "-n", ns, "onnode"}, true,
			`Error from server: Get "https://` + kubelet + `/containerLogs/kubelet/onnode/c": ` + refused},
		{"exec of a pod without node", []string{"exec", "-n", ns, "unscheduled", "--", "ls"}, true,
			"Error from server (BadRequest): pod unscheduled does not have a host assigned"},
		{"exec of an unreachable kubelet", []string{"exec", "-n", ns, "onnode", "--", "ls"}, true,
			"Error from server: error dialing backend: " + refused},
		{"port-forward of an unreachable kubelet", []string{"port-forward", "-n", ns, "pod/onnode", ":80"}, true,
			"error dialing backend: " + refused},
	}
	for _, c := range kubectl {
		t.Run("kubectl "+c.name, func(t *testing.T) {
			out, err := e2eutil.Kubectl(t, ts, c.args...)
			if (err != nil) != c.fail {
				t.Fatalf("error %v, want failure %v:\n%s", err, c.fail, out)
			}
			if c.want == "" && out != "" {
				t.Errorf("output %q, want none", out)
			}
			t.Logf("kubectl %v:\n%s", c.args, out)
			e2eutil.MustContain(t, "kubectl output", out, c.want)
		})
	}
}

func jsonDecode(resp *http.Response, into any) error {
	return json.NewDecoder(resp.Body).Decode(into)
}
