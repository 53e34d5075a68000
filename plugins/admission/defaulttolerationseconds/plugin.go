// Package defaulttolerationseconds is kube's DefaultTolerationSeconds
// admission plugin: pods that do not tolerate the not-ready and
// unreachable NoExecute taints get tolerations for them, for 300 s by
// default, so they are evicted from a lost node after that long.
package defaulttolerationseconds

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kpipe/kpipe/config"
	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in the mutating-admission list.
const Name = "DefaultTolerationSeconds"

// Config is the plugin's config block: kube's
// --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds.
type Config struct {
	NotReadyTolerationSeconds    int64 `koanf:"defaultNotReadyTolerationSeconds"`
	UnreachableTolerationSeconds int64 `koanf:"defaultUnreachableTolerationSeconds"`
}

// Validate implements pipeline.Validator.
func (c *Config) Validate() error {
	if c.NotReadyTolerationSeconds < 0 {
		return &config.FieldError{Key: "defaultNotReadyTolerationSeconds", Msg: "must not be negative"}
	}
	if c.UnreachableTolerationSeconds < 0 {
		return &config.FieldError{Key: "defaultUnreachableTolerationSeconds", Msg: "must not be negative"}
	}
	return nil
}

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindMutatingAdmission,
		Description: "adds tolerations for the not-ready and unreachable NoExecute taints to pods lacking them.",
		Config:      func() any { return &Config{NotReadyTolerationSeconds: 300, UnreachableTolerationSeconds: 300} },
		New:         func(c any) (any, error) { return &Plugin{cfg: *c.(*Config)}, nil },
	})
}

// Plugin is the admission plugin.
type Plugin struct{ cfg Config }

var _ admission.Mutator = (*Plugin)(nil)

// Handles implements admission.Handles.
func (*Plugin) Handles(op string) bool { return op == admission.Create || op == admission.Update }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(_ context.Context, a *admission.Attributes) error {
	if !a.Is("", "pods") {
		return nil
	}
	pod, ok := a.Op.Object.(*corev1.Pod)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("expected *api.Pod but got %T", a.Op.Object))
	}
	notReady, unreachable := false, false
	for _, t := range pod.Spec.Tolerations {
		noExecute := t.Effect == corev1.TaintEffectNoExecute || t.Effect == ""
		notReady = notReady || noExecute && (t.Key == corev1.TaintNodeNotReady || t.Key == "")
		unreachable = unreachable || noExecute && (t.Key == corev1.TaintNodeUnreachable || t.Key == "")
	}
	if !notReady {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeNotReady, p.cfg.NotReadyTolerationSeconds))
	}
	if !unreachable {
		pod.Spec.Tolerations = append(pod.Spec.Tolerations, toleration(corev1.TaintNodeUnreachable, p.cfg.UnreachableTolerationSeconds))
	}
	return nil
}

func toleration(key string, seconds int64) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds}
}
