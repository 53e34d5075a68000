package etcdwriter

import (
	"net/url"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kubelet URLs kube's pod REST builds from each subresource's query.
func TestKubeletURL(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}}}
	cases := []struct {
		name, sub, query, want string
	}{
		{"log", "log", "follow=1&tailLines=3&sinceSeconds=10&timestamps=false&limitBytes=7&previous=true",
			"https://h:1/containerLogs/ns/p/c?follow=true&limitBytes=7&previous=true&sinceSeconds=10&tailLines=3"},
		{"log since a time", "log", "sinceTime=2026-01-02T03:04:05Z", "https://h:1/containerLogs/ns/p/c?sinceTime=2026-01-02T03%3A04%3A05Z"},
		{"exec", "exec", "command=sh&command=-c&command=ls&stdin=true&stdout=1&tty=false&container=c",
			"https://h:1/exec/ns/p/c?command=sh&command=-c&command=ls&input=1&output=1"},
		{"attach", "attach", "stderr=true&tty=true", "https://h:1/attach/ns/p/c?error=1&tty=1"},
		{"portforward", "portforward", "ports=80&ports=8080,9090", "https://h:1/portForward/ns/p?port=80%2C8080%2C9090"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q, _ := url.ParseQuery(c.query)
			opts, container, err := kubeletOptions(c.sub, q)
			if err != nil {
				t.Fatal(err)
			}
			if c.sub != "portforward" {
				if container, err = podContainer(pod, container); err != nil {
					t.Fatal(err)
				}
			}
			if got := kubeletURL("h:1", pod, c.sub, container, opts).String(); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
	bad := []struct {
		name, sub string
		q         url.Values
		want      string
	}{
		{"tailLines", "log", url.Values{"tailLines": {"x"}}, `strconv.ParseInt: parsing "x": invalid syntax`},
		{"ports", "portforward", url.Values{"ports": {"http"}}, `cannot convert to []int32: strconv.ParseUint: parsing "http": invalid syntax`},
	}
	for _, c := range bad {
		t.Run("bad "+c.name, func(t *testing.T) {
			if _, _, err := kubeletOptions(c.sub, c.q); err == nil || err.Error() != c.want {
				t.Errorf("error %v, want %s", err, c.want)
			}
		})
	}
}
