package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kpipe/kpipe/internal/server/certs"
)

// The deployment deploy/compose describes, without containers: `pki init`
// makes one PKI, `apiserver etcd` runs a 3-member etcd cluster with mutual
// TLS for clients and peers, and two replicas share it; an object written
// through one is read through the other with the generated admin
// kubeconfig, whose certificate both replicas trust; services created
// through both at once get distinct ClusterIPs; a service account token
// issued by one is good on the other, as both sign with pki init's sa.key.
func TestReplicasOnEtcdClusterFromPKIInit(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five processes")
	}
	pki := filepath.Join(t.TempDir(), "pki")
	out, err := run(t, "pki", "init", "--dir", pki, "--replicas", "2", "--hosts", "kpipe.example,127.0.0.1", "--etcd-members", "3")
	if err != nil {
		t.Fatalf("pki init: %v\n%s", err, out)
	}
	for _, f := range []string{"ca.crt", "client-ca.crt", "apiserver-0.crt", "apiserver-1.key", "admin.kubeconfig", "etcd-ca.crt", "etcd-2.crt", "apiserver-etcd-client.key", "sa.key", "sa.pub"} {
		if _, err := os.Stat(filepath.Join(pki, f)); err != nil {
			t.Fatalf("pki init did not write %s: %v", f, err)
		}
	}
	for _, f := range []string{"ca.key", "client-ca.key", "apiserver-0.key", "admin.key", "etcd-ca.key", "etcd-0.key", "admin.kubeconfig", "sa.key"} {
		if st, err := os.Stat(filepath.Join(pki, f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v, err %v; want 0600", f, st.Mode().Perm(), err)
		}
	}
	kc, err := clientcmd.LoadFromFile(filepath.Join(pki, "admin.kubeconfig"))
	if err != nil || kc.Clusters["kpipe"].Server != "https://kpipe.example:6443" {
		t.Fatalf("admin.kubeconfig: %v %+v", err, kc)
	}
	// A second run keeps the CAs and the service account key.
	ca, _ := os.ReadFile(filepath.Join(pki, "ca.crt"))
	saKey, _ := os.ReadFile(filepath.Join(pki, "sa.key"))
	if out, err := run(t, "pki", "init", "--dir", pki, "--replicas", "3", "--hosts", "kpipe.example,127.0.0.1", "--etcd-members", "3"); err != nil {
		t.Fatalf("second pki init: %v\n%s", err, out)
	}
	if again, _ := os.ReadFile(filepath.Join(pki, "ca.crt")); string(again) != string(ca) {
		t.Fatal("a second pki init replaced the CA")
	}
	if again, _ := os.ReadFile(filepath.Join(pki, "sa.key")); string(again) != string(saKey) {
		t.Fatal("a second pki init replaced the service account key")
	}

	var client, peer, cluster []string
	for i := range 3 {
		for _, l := range []*[]string{&client, &peer} {
			ln, port := freePort(t)
			ln.Close()
			*l = append(*l, "https://127.0.0.1:"+port)
		}
		cluster = append(cluster, fmt.Sprintf("etcd-%d=%s", i, peer[i]))
	}
	for i := range 3 {
		name := fmt.Sprintf("etcd-%d", i)
		cmd := exec.Command(binary(t), "etcd", "--name", name, "--data-dir", filepath.Join(t.TempDir(), name),
			"--listen-client-urls", client[i], "--advertise-client-urls", client[i],
			"--listen-peer-urls", peer[i], "--initial-advertise-peer-urls", peer[i],
			"--initial-cluster", strings.Join(cluster, ","), "--initial-cluster-token", "test",
			"--cert-file", filepath.Join(pki, name+".crt"), "--key-file", filepath.Join(pki, name+".key"),
			"--trusted-ca-file", filepath.Join(pki, "etcd-ca.crt"), "--client-cert-auth",
			"--peer-cert-file", filepath.Join(pki, name+".crt"), "--peer-key-file", filepath.Join(pki, name+".key"),
			"--peer-trusted-ca-file", filepath.Join(pki, "etcd-ca.crt"), "--peer-client-cert-auth")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}

	var clients []kubernetes.Interface
	var ports []string
	for i := range 2 {
		p := startBinary(t, "--etcd-servers", strings.Join(client, ","),
			"--etcd-cafile", filepath.Join(pki, "etcd-ca.crt"),
			"--etcd-certfile", filepath.Join(pki, "apiserver-etcd-client.crt"),
			"--etcd-keyfile", filepath.Join(pki, "apiserver-etcd-client.key"),
			"--tls-cert-file", filepath.Join(pki, fmt.Sprintf("apiserver-%d.crt", i)),
			"--tls-private-key-file", filepath.Join(pki, fmt.Sprintf("apiserver-%d.key", i)),
			"--client-ca-file", filepath.Join(pki, "client-ca.crt"),
			"--service-account-signing-key-file", filepath.Join(pki, "sa.key"),
			"--service-account-key-file", filepath.Join(pki, "sa.pub"))
		p.waitReady(t)
		ports = append(ports, p.port)
		cfg, err := clientcmd.BuildConfigFromFlags("https://127.0.0.1:"+p.port, filepath.Join(pki, "admin.kubeconfig"))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, kubernetes.NewForConfigOrDie(cfg))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A watch on replica 1 sees what replica 0 writes: one revision space.
	w, err := clients[1].CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=shared"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	created, err := clients[0].CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "shared"}, Data: map[string]string{"via": "apiserver-0"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create through replica 0: %v", err)
	}
	got, err := clients[1].CoreV1().ConfigMaps("default").Get(ctx, "shared", metav1.GetOptions{ResourceVersion: created.ResourceVersion})
	if err != nil || got.Data["via"] != "apiserver-0" || got.UID != created.UID {
		t.Fatalf("read through replica 1: %v %+v", err, got)
	}
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != "ADDED" || cm.ResourceVersion != created.ResourceVersion {
			t.Fatalf("replica 1's watch got %s %#v", ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Fatal("replica 1's watch saw nothing")
	}

	// The ClusterIP allocator is shared: services created at once through
	// both replicas get distinct addresses.
	var wg sync.WaitGroup
	ips := make(chan string, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			svc, err := clients[i%2].CoreV1().Services("default").Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("svc-%d", i)},
				Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Errorf("service %d through replica %d: %v", i, i%2, err)
				return
			}
			ips <- svc.Spec.ClusterIP
		}()
	}
	wg.Wait()
	close(ips)
	seen := map[string]bool{}
	for ip := range ips {
		if ip == "" || seen[ip] {
			t.Fatalf("ClusterIP %q allocated twice or empty across replicas", ip)
		}
		seen[ip] = true
	}

	// RBAC written through replica 0 reaches replica 1's cache.
	clientCA, err := certs.LoadOrCreateCA(pki, "client-ca", "kpipe-client-ca")
	if err != nil {
		t.Fatal(err)
	}
	certPEM, keyPEM, err := clientCA.IssueClient("alice", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	aliceCfg, err := clientcmd.BuildConfigFromFlags("https://127.0.0.1:"+ports[1], filepath.Join(pki, "admin.kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	aliceCfg.CertFile, aliceCfg.KeyFile, aliceCfg.CertData, aliceCfg.KeyData = "", "", certPEM, keyPEM
	alice := kubernetes.NewForConfigOrDie(aliceCfg)
	if _, err := alice.CoreV1().ConfigMaps("default").Get(ctx, "shared", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Fatalf("alice before any binding: %v", err)
	}
	if _, err := clients[0].RbacV1().RoleBindings("default").Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "alice-view"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "view"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "alice"}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := alice.CoreV1().ConfigMaps("default").Get(ctx, "shared", metav1.GetOptions{})
		if err == nil {
			break
		}
		if ctx.Err() != nil || !apierrors.IsForbidden(err) {
			t.Fatalf("alice on replica 1 after a binding made on replica 0: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A TokenRequest answered by replica 0 gives a token replica 1 accepts.
	if _, err := clients[0].CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "robot"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := clients[0].CoreV1().ServiceAccounts("default").CreateToken(ctx, "robot", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request through replica 0: %v", err)
	}
	const robot = "system:serviceaccount:default:robot"
	for i, port := range ports {
		cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: "https://127.0.0.1:" + port, BearerToken: tr.Status.Token,
			TLSClientConfig: rest.TLSClientConfig{CAFile: filepath.Join(pki, "ca.crt")}})
		who, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if err != nil || who.Status.UserInfo.Username != robot {
			t.Fatalf("replica 0's token on replica %d: %v %+v", i, err, who)
		}
	}

	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Log("kubectl is not on PATH: the kubectl step is skipped")
		return
	}
	kout, err := exec.Command("kubectl", "--kubeconfig", filepath.Join(pki, "admin.kubeconfig"), "--server", "https://127.0.0.1:"+ports[1],
		"get", "configmap", "shared", "-o", "jsonpath={.data.via}").CombinedOutput()
	if err != nil || string(kout) != "apiserver-0" {
		t.Fatalf("kubectl through replica 1: %v %s", err, kout)
	}
	// kubectl create token on replica 1, kubectl auth whoami with it on 0.
	kout, err = exec.Command("kubectl", "--kubeconfig", filepath.Join(pki, "admin.kubeconfig"), "--server", "https://127.0.0.1:"+ports[1],
		"create", "token", "robot").Output()
	if err != nil {
		t.Fatalf("kubectl create token through replica 1: %v %s", err, kout)
	}
	tokenOnly := clientcmdapi.NewConfig()
	tokenOnly.Clusters["kpipe"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:" + ports[0], CertificateAuthority: filepath.Join(pki, "ca.crt")}
	tokenOnly.AuthInfos["robot"] = &clientcmdapi.AuthInfo{Token: strings.TrimSpace(string(kout))}
	tokenOnly.Contexts["robot"] = &clientcmdapi.Context{Cluster: "kpipe", AuthInfo: "robot"}
	tokenOnly.CurrentContext = "robot"
	robotConfig := filepath.Join(t.TempDir(), "robot.kubeconfig")
	if err := clientcmd.WriteToFile(*tokenOnly, robotConfig); err != nil {
		t.Fatal(err)
	}
	kout, err = exec.Command("kubectl", "--kubeconfig", robotConfig, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}").CombinedOutput()
	if err != nil || string(kout) != robot {
		t.Fatalf("kubectl auth whoami on replica 0 with replica 1's token: %v %s", err, kout)
	}
}
