package etcdwriter

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/request"
	"github.com/kpipe/kpipe/internal/storage/store"
)

// kube-apiserver's defaults for reaching a kubelet: --kubelet-port and
// --kubelet-preferred-address-types.
const kubeletPort = 10250

var kubeletAddressTypes = []corev1.NodeAddressType{
	corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP,
}

// kubeletDialTimeout bounds the dial of a kubelet that does not answer,
// as client-go's default transport that kube's kubelet client uses.
const kubeletDialTimeout = 30 * time.Second

// serveKubelet answers the pods' log, exec, attach and portforward as
// kube's pod REST finds their location: the pod, its container, its node
// and the node's kubelet address. kpipe does not proxy to kubelets yet:
// it dials the kubelet to answer kube's error for one it cannot reach.
func (wr *Writer) serveKubelet(w http.ResponseWriter, r *http.Request, res *api.Resource, info *request.RequestInfo) error {
	if !slices.Contains(res.Subresources[info.Subresource].Verbs, info.Verb) {
		// kube has no route for the method: its router's 405.
		return apierrors.NewGenericServerResponse(http.StatusMethodNotAllowed, "", schema.GroupResource{}, "", "", 0, false)
	}
	opts, container, err := kubeletOptions(info.Subresource, r.URL.Query())
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if o, ok := opts.(*corev1.PodLogOptions); ok {
		if errs := validateLogOptions(o); len(errs) > 0 {
			return apierrors.NewInvalid(schema.GroupKind{Kind: "PodLogOptions"}, info.Name, errs)
		}
	}
	pod := &corev1.Pod{}
	if err := res.Store.Get(r.Context(), res.Key(wr.prefix, info.Namespace, info.Name), store.GetOptions{}, pod); err != nil {
		return err
	}
	if info.Subresource != "portforward" {
		if container, err = podContainer(pod, container); err != nil {
			return err
		}
	}
	if pod.Spec.NodeName == "" {
		if info.Subresource == "log" {
			// kube streams nothing for a pod no node runs.
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		return apierrors.NewBadRequest(fmt.Sprintf("pod %s does not have a host assigned", info.Name))
	}
	host, err := wr.kubeletHost(r.Context(), pod.Spec.NodeName)
	if err != nil {
		return err
	}
	loc := kubeletURL(host, pod, info.Subresource, container, opts)
	if info.Subresource != "log" && !isUpgrade(r) {
		return apierrors.NewBadRequest("Upgrade request required")
	}
	ctx, cancel := context.WithTimeout(r.Context(), kubeletDialTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		if info.Subresource == "log" {
			return kubeletError((&url.Error{Op: "Get", URL: loc.String(), Err: err}).Error())
		}
		return kubeletError("error dialing backend: " + err.Error())
	}
	conn.Close()
	return apierrors.NewServiceUnavailable(fmt.Sprintf("kpipe does not proxy pods/%s to kubelets yet", info.Subresource))
}

// kubeletError is kube's answer to an error that is not an API status: a
// 500 with the error's text and no reason.
func kubeletError(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusInternalServerError, Reason: metav1.StatusReasonUnknown, Message: msg,
	}}
}

// kubeletHost is the node's kubelet as host:port, as kube's
// NodeConnectionInfoGetter finds it: the first address of the preferred
// types, and the port the kubelet reports or kube's default.
func (wr *Writer) kubeletHost(ctx context.Context, nodeName string) (string, error) {
	nodes, ok := wr.resources.Lookup("", "v1", "nodes")
	if !ok {
		return "", apierrors.NewNotFound(corev1.Resource("nodes"), nodeName)
	}
	node := &corev1.Node{}
	if err := nodes.Store.Get(ctx, nodes.Key(wr.prefix, "", nodeName), store.GetOptions{}, node); err != nil {
		return "", err
	}
	host := ""
	for _, t := range kubeletAddressTypes {
		for _, a := range node.Status.Addresses {
			if a.Type == t && host == "" {
				host = a.Address
			}
		}
	}
	if host == "" {
		return "", kubeletError(fmt.Sprintf("no preferred addresses found; known addresses: %v", node.Status.Addresses))
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port <= 0 {
		port = kubeletPort
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// kubeletURL is the kubelet's URL of the subresource, as kube builds it.
func kubeletURL(host string, pod *corev1.Pod, sub, container string, opts runtime.Object) *url.URL {
	q := url.Values{}
	path := ""
	flag := func(name string, on bool) {
		if on {
			q.Add(name, "1")
		}
	}
	switch o := opts.(type) {
	case *corev1.PodLogOptions:
		path = fmt.Sprintf("/containerLogs/%s/%s/%s", pod.Namespace, pod.Name, container)
		if o.Follow {
			q.Add("follow", "true")
		}
		if o.Previous {
			q.Add("previous", "true")
		}
		if o.Timestamps {
			q.Add("timestamps", "true")
		}
		if o.SinceSeconds != nil {
			q.Add("sinceSeconds", strconv.FormatInt(*o.SinceSeconds, 10))
		}
		if o.SinceTime != nil {
			q.Add("sinceTime", o.SinceTime.Format(time.RFC3339))
		}
		if o.TailLines != nil {
			q.Add("tailLines", strconv.FormatInt(*o.TailLines, 10))
		}
		if o.LimitBytes != nil {
			q.Add("limitBytes", strconv.FormatInt(*o.LimitBytes, 10))
		}
	case *corev1.PodExecOptions:
		path = fmt.Sprintf("/exec/%s/%s/%s", pod.Namespace, pod.Name, container)
		flag(corev1.ExecStdinParam, o.Stdin)
		flag(corev1.ExecStdoutParam, o.Stdout)
		flag(corev1.ExecStderrParam, o.Stderr)
		flag(corev1.ExecTTYParam, o.TTY)
		for _, c := range o.Command {
			q.Add("command", c)
		}
	case *corev1.PodAttachOptions:
		path = fmt.Sprintf("/attach/%s/%s/%s", pod.Namespace, pod.Name, container)
		flag(corev1.ExecStdinParam, o.Stdin)
		flag(corev1.ExecStdoutParam, o.Stdout)
		flag(corev1.ExecStderrParam, o.Stderr)
		flag(corev1.ExecTTYParam, o.TTY)
	case *corev1.PodPortForwardOptions:
		path = fmt.Sprintf("/portForward/%s/%s", pod.Namespace, pod.Name)
		if len(o.Ports) > 0 {
			ports := make([]string, len(o.Ports))
			for i, p := range o.Ports {
				ports[i] = strconv.Itoa(int(p))
			}
			q.Add(corev1.PortHeader, strings.Join(ports, ","))
		}
	}
	return &url.URL{Scheme: "https", Host: host, Path: path, RawQuery: q.Encode()}
}

// podContainer is kube's validateContainer: the named container must be
// the pod's; without a name, the pod's only container.
func podContainer(pod *corev1.Pod, name string) (string, error) {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names = append(names, c.Name)
	}
	if name == "" {
		switch len(pod.Spec.Containers) {
		case 1:
			return pod.Spec.Containers[0].Name, nil
		case 0:
			return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s", pod.Name))
		}
		return "", apierrors.NewBadRequest(fmt.Sprintf("a container name must be specified for pod %s, choose one of: %s", pod.Name, names))
	}
	for _, n := range names {
		if n == name {
			return name, nil
		}
	}
	return "", apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", name, pod.Name))
}

// isUpgrade reports a request to switch protocols (SPDY or WebSocket), as
// kube's httpstream.IsUpgradeRequest.
func isUpgrade(r *http.Request) bool {
	for _, v := range r.Header.Values("Connection") {
		if strings.Contains(strings.ToLower(v), "upgrade") {
			return true
		}
	}
	return false
}

// kubeletOptions reads the subresource's options from the query, as
// kube's conversions of url.Values into PodLogOptions, PodExecOptions,
// PodAttachOptions and PodPortForwardOptions do, and the container named.
func kubeletOptions(sub string, q url.Values) (runtime.Object, string, error) {
	var err error
	flag := func(name string) bool {
		v, ok := q[name]
		if !ok || len(v) == 0 {
			return false
		}
		switch strings.ToLower(v[0]) {
		case "false", "0":
			return false
		}
		return true
	}
	number := func(name string) *int64 {
		v := q.Get(name)
		if v == "" || err != nil {
			return nil
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil {
			err = perr
			return nil
		}
		return &n
	}
	container := q.Get("container")
	switch sub {
	case "log":
		o := &corev1.PodLogOptions{Container: container, Follow: flag("follow"), Previous: flag("previous"),
			Timestamps: flag("timestamps"), InsecureSkipTLSVerifyBackend: flag("insecureSkipTLSVerifyBackend"),
			SinceSeconds: number("sinceSeconds"), TailLines: number("tailLines"), LimitBytes: number("limitBytes")}
		if v, ok := q["stream"]; ok && len(v) > 0 {
			o.Stream = &v[0]
		}
		if v := q.Get("sinceTime"); v != "" {
			t, perr := time.Parse(time.RFC3339, v)
			if perr != nil {
				return nil, "", perr
			}
			o.SinceTime = &metav1.Time{Time: t}
		}
		return o, container, err
	case "exec":
		return &corev1.PodExecOptions{Container: container, Command: q["command"], Stdin: flag("stdin"),
			Stdout: flag("stdout"), Stderr: flag("stderr"), TTY: flag("tty")}, container, nil
	case "attach":
		return &corev1.PodAttachOptions{Container: container, Stdin: flag("stdin"),
			Stdout: flag("stdout"), Stderr: flag("stderr"), TTY: flag("tty")}, container, nil
	}
	o := &corev1.PodPortForwardOptions{}
	if ports := q["ports"]; len(ports) > 0 {
		if err := metav1.Convert_Slice_string_To_Slice_int32(&ports, &o.Ports, nil); err != nil {
			return nil, "", err
		}
	}
	return o, "", nil
}

// validateLogOptions is kube's ValidatePodLogOptions with its
// PodLogsQuerySplitStreams gate off, as in v1.37.
func validateLogOptions(o *corev1.PodLogOptions) field.ErrorList {
	var errs field.ErrorList
	if o.TailLines != nil && *o.TailLines < 0 {
		errs = append(errs, field.Invalid(field.NewPath("tailLines"), *o.TailLines, "must be greater than or equal to 0"))
	}
	if o.LimitBytes != nil && *o.LimitBytes < 1 {
		errs = append(errs, field.Invalid(field.NewPath("limitBytes"), *o.LimitBytes, "must be greater than 0"))
	}
	switch {
	case o.SinceSeconds != nil && o.SinceTime != nil:
		errs = append(errs, field.Forbidden(field.NewPath(""), "at most one of `sinceTime` or `sinceSeconds` may be specified"))
	case o.SinceSeconds != nil && *o.SinceSeconds < 1:
		errs = append(errs, field.Invalid(field.NewPath("sinceSeconds"), *o.SinceSeconds, "must be greater than 0"))
	}
	if o.Stream != nil {
		errs = append(errs, field.Forbidden(field.NewPath("stream"), "may not be specified"))
	}
	return errs
}
