// Package mutatingwebhook is kube's MutatingAdmissionWebhook: it calls the
// webhooks of the MutatingWebhookConfigurations, in order, and applies
// their JSONPatch answers.
package mutatingwebhook

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kpipe/kpipe/internal/admission"
	"github.com/kpipe/kpipe/internal/admission/webhook"
	"github.com/kpipe/kpipe/internal/pipeline"
)

// Name is the plugin's name in the mutating-admission list.
const Name = "MutatingAdmissionWebhook"

// Register adds the plugin to r.
func Register(r *pipeline.Registry) {
	r.MustRegister(pipeline.Plugin{
		Name:        Name,
		Kind:        pipeline.KindMutatingAdmission,
		Description: "calls the webhooks of the MutatingWebhookConfigurations in order and applies their patches.",
		New:         func(any) (any, error) { return &Plugin{}, nil },
	})
}

// Plugin is the admission plugin.
type Plugin struct {
	dispatcher *webhook.Dispatcher
	clients    *webhook.Clients
}

var (
	_ admission.Mutator    = (*Plugin)(nil)
	_ pipeline.Provisioner = (*Plugin)(nil)
	_ pipeline.Closer      = (*Plugin)(nil)
)

// Provision implements pipeline.Provisioner: it starts the watch-fed
// mirror of the configurations.
func (p *Plugin) Provision(env *pipeline.Env) error {
	d, clients, err := webhook.NewDispatcher(env, Name, "mutatingwebhookconfigurations", func(obj runtime.Object) []webhook.Hook {
		c, ok := obj.(*admissionregistrationv1.MutatingWebhookConfiguration)
		if !ok {
			return nil
		}
		return webhook.MutatingHooks(c)
	})
	if err != nil {
		return err
	}
	p.dispatcher, p.clients = d, clients
	return nil
}

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) error {
	return p.dispatcher.Admit(ctx, a)
}

// Close implements pipeline.Closer.
func (p *Plugin) Close() error {
	p.clients.Close()
	return nil
}
