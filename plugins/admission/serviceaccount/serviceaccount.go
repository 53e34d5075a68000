package serviceaccount

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/api"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// kube's names.
const (
	DefaultServiceAccountName         = "default"
	EnforceMountableSecretsAnnotation = "kubernetes.io/enforce-mountable-secrets"
	ServiceAccountVolumeName          = "kube-api-access"
	DefaultAPITokenMountPath          = "/var/run/secrets/kubernetes.io/serviceaccount"
	// tokenExpirationSeconds is kube's warn-only bound token lifetime.
	tokenExpirationSeconds = 60*60 + 7
)

// Plugin is the admission plugin.
type Plugin struct {
	cfg      Config
	objects  *admission.Objects
	accounts *api.Resource
}

var (
	_ admission.Mutator   = (*Plugin)(nil)
	_ admission.Validator = (*Plugin)(nil)
)

// Provision implements pipeline.Provisioner.
func (p *Plugin) Provision(env *pipeline.Env) error {
	o, err := admission.NewObjects(env)
	if err != nil {
		return err
	}
	p.objects = o
	p.accounts, err = o.Resource("", "v1", "serviceaccounts")
	return err
}

// Handles implements admission.Handles.
func (*Plugin) Handles(op string) bool { return op == admission.Create || op == admission.Update }

func podOf(a *admission.Attributes) *corev1.Pod {
	if a.Op.Resource.Name != "pods" || a.Op.Resource.GroupVersion.Group != "" || (a.Op.Subresource != "" && a.Op.Subresource != "ephemeralcontainers") {
		return nil
	}
	pod, _ := a.Op.Object.(*corev1.Pod)
	return pod
}

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil || a.Operation != admission.Create {
		return nil
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return p.Validate(ctx, a)
	}
	if pod.Spec.ServiceAccountName == "" {
		pod.Spec.ServiceAccountName = DefaultServiceAccountName
		pod.Spec.DeprecatedServiceAccount = DefaultServiceAccountName //nolint:staticcheck // kube still sets it
	}
	sa, err := p.account(ctx, a.Info.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Info.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if p.cfg.MountServiceAccountToken && automount(sa, pod) {
		mountToken(pod)
	}
	if len(pod.Spec.ImagePullSecrets) == 0 && len(sa.ImagePullSecrets) > 0 {
		pod.Spec.ImagePullSecrets = make([]corev1.LocalObjectReference, len(sa.ImagePullSecrets))
		for i, s := range sa.ImagePullSecrets {
			pod.Spec.ImagePullSecrets[i].Name = s.Name
		}
	}
	return p.Validate(ctx, a)
}

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	pod := podOf(a)
	if pod == nil {
		return nil
	}
	if a.Operation == admission.Update && a.Op.Subresource == "ephemeralcontainers" {
		return p.limitEphemeral(ctx, a, pod)
	}
	if a.Operation != admission.Create {
		return nil
	}
	if _, mirror := pod.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return validateMirror(a, pod)
	}
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Info.Namespace, pod.Name))
	}
	sa, err := p.account(ctx, a.Info.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %v", a.Info.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if p.enforce(sa) {
		if err := limitSecretReferences(sa, pod); err != nil {
			return admission.NewForbidden(a, err)
		}
	}
	return nil
}

// account reads a service account. The default account is asked for a
// few times, as kube does, since the controller may be creating it in a
// namespace just made.
func (p *Plugin) account(ctx context.Context, namespace, name string) (*corev1.ServiceAccount, error) {
	attempts := 1
	if name == DefaultServiceAccountName {
		attempts = 10
	}
	// The cache first, as kube's lister; a miss is checked live.
	if sa := (&corev1.ServiceAccount{}); p.objects.GetCached(ctx, p.accounts, namespace, name, sa) == nil {
		return sa, nil
	}
	wait := time.Duration(100+rand.IntN(100)) * time.Millisecond
	for i := 0; i < attempts; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(wait):
			}
		}
		sa := &corev1.ServiceAccount{}
		err := p.objects.Get(ctx, p.accounts, namespace, name, sa)
		if err == nil {
			return sa, nil
		}
		if !apierrors.IsNotFound(err) {
			return nil, err
		}
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccount"}, name)
}

func automount(sa *corev1.ServiceAccount, pod *corev1.Pod) bool {
	if pod.Spec.AutomountServiceAccountToken != nil {
		return *pod.Spec.AutomountServiceAccountToken
	}
	if sa.AutomountServiceAccountToken != nil {
		return *sa.AutomountServiceAccountToken
	}
	return true
}

func (p *Plugin) enforce(sa *corev1.ServiceAccount) bool {
	if p.cfg.LimitSecretReferences {
		return true
	}
	v, ok := sa.Annotations[EnforceMountableSecretsAnnotation]
	b, _ := strconv.ParseBool(v)
	return ok && b
}

// mountToken mounts the projected token volume at kube's path in every
// init and regular container that has nothing mounted there, adding the
// volume when a container needs it.
func mountToken(pod *corev1.Pod) {
	volume := ""
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, ServiceAccountVolumeName+"-") {
			volume = v.Name
			break
		}
	}
	has := volume != ""
	if !has {
		volume = api.GenerateName(ServiceAccountVolumeName + "-")
	}
	mount := corev1.VolumeMount{Name: volume, ReadOnly: true, MountPath: DefaultAPITokenMountPath}
	needed := false
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			if !mountsAt(cs[i].VolumeMounts, DefaultAPITokenMountPath) {
				cs[i].VolumeMounts = append(cs[i].VolumeMounts, mount)
				needed = true
			}
		}
	}
	if !has && needed {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: volume, VolumeSource: corev1.VolumeSource{Projected: TokenVolumeSource()}})
	}
}

func mountsAt(mounts []corev1.VolumeMount, path string) bool {
	for _, m := range mounts {
		if m.MountPath == path {
			return true
		}
	}
	return false
}

// TokenVolumeSource is kube's projected service account volume: a bound
// token, the cluster CA from kube-root-ca.crt, and the namespace.
func TokenVolumeSource() *corev1.ProjectedVolumeSource {
	return &corev1.ProjectedVolumeSource{
		DefaultMode: ptr.To[int32](corev1.ProjectedVolumeSourceDefaultMode),
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](tokenExpirationSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
			{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
				Path:     "namespace",
				FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
			}}}},
		},
	}
}

func validateMirror(a *admission.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName != "" {
		return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference service accounts"))
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil {
			return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
		}
		if v.Projected != nil {
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
				}
				if s.ServiceAccountToken != nil {
					return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not use ServiceAccountToken volume projections"))
				}
			}
		}
	}
	if len(pod.Spec.ImagePullSecrets) > 0 {
		return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
	}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for _, c := range cs {
			if secretEnv(c.Env, c.EnvFrom) {
				return admission.NewForbidden(a, fmt.Errorf("a mirror pod may not reference secrets"))
			}
		}
	}
	return nil
}

func secretEnv(env []corev1.EnvVar, from []corev1.EnvFromSource) bool {
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			return true
		}
	}
	for _, f := range from {
		if f.SecretRef != nil {
			return true
		}
	}
	return false
}

// limitSecretReferences refuses secrets the account does not list, with
// kube's messages.
func limitSecretReferences(sa *corev1.ServiceAccount, pod *corev1.Pod) error {
	mountable := map[string]bool{}
	for _, s := range sa.Secrets {
		mountable[s.Name] = true
	}
	for _, v := range pod.Spec.Volumes {
		if v.Secret != nil && !mountable[v.Secret.SecretName] {
			return fmt.Errorf("volume with secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", v.Secret.SecretName, sa.Name)
		}
	}
	for _, set := range []struct {
		what string
		cs   []corev1.Container
	}{{"init container", pod.Spec.InitContainers}, {"container", pod.Spec.Containers}} {
		for _, c := range set.cs {
			if err := envRefs(set.what, c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
				return err
			}
		}
	}
	pull := map[string]bool{}
	for _, s := range sa.ImagePullSecrets {
		pull[s.Name] = true
	}
	for i, ref := range pod.Spec.ImagePullSecrets {
		if !pull[ref.Name] {
			return fmt.Errorf(`imagePullSecrets[%d].name="%s" is not allowed because service account %s does not reference that imagePullSecret`, i, ref.Name, sa.Name)
		}
	}
	return nil
}

func envRefs(what, container string, env []corev1.EnvVar, from []corev1.EnvFromSource, mountable map[string]bool, sa string) error {
	for _, e := range env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && !mountable[e.ValueFrom.SecretKeyRef.Name] {
			return fmt.Errorf("%s %s with envVar %s referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", what, container, e.Name, e.ValueFrom.SecretKeyRef.Name, sa)
		}
	}
	for _, f := range from {
		if f.SecretRef != nil && !mountable[f.SecretRef.Name] {
			return fmt.Errorf("%s %s with envFrom referencing secret.secretName=\"%s\" is not allowed because service account %s does not reference that secret", what, container, f.SecretRef.Name, sa)
		}
	}
	return nil
}

// limitEphemeral checks an ephemeral containers update against the
// account's mountable secrets.
func (p *Plugin) limitEphemeral(ctx context.Context, a *admission.Attributes, pod *corev1.Pod) error {
	if pod.Spec.ServiceAccountName == "" {
		return admission.NewForbidden(a, fmt.Errorf("no service account specified for pod %s/%s", a.Info.Namespace, pod.Name))
	}
	sa, err := p.account(ctx, a.Info.Namespace, pod.Spec.ServiceAccountName)
	if err != nil {
		return admission.NewForbidden(a, fmt.Errorf("error looking up service account %s/%s: %w", a.Info.Namespace, pod.Spec.ServiceAccountName, err))
	}
	if !p.enforce(sa) {
		return nil
	}
	mountable := map[string]bool{}
	for _, s := range sa.Secrets {
		mountable[s.Name] = true
	}
	for _, c := range pod.Spec.EphemeralContainers {
		if err := envRefs("ephemeral container", c.Name, c.Env, c.EnvFrom, mountable, sa.Name); err != nil {
			return err
		}
	}
	return nil
}
