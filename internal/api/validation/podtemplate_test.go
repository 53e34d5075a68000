package validation

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var podTemplateGK = schema.GroupKind{Kind: "PodTemplate"}

// podTemplateObj is a defaulted PodTemplate, as validation sees it.
func podTemplateObj(mut ...func(*corev1.PodTemplate)) *corev1.PodTemplate {
	grace := int64(30)
	t := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", ResourceVersion: "3"},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: "nginx", ImagePullPolicy: corev1.PullAlways,
					TerminationMessagePolicy: corev1.TerminationMessageReadFile}},
				RestartPolicy: corev1.RestartPolicyAlways, DNSPolicy: corev1.DNSClusterFirst,
				TerminationGracePeriodSeconds: &grace,
			},
		},
	}
	for _, m := range mut {
		m(t)
	}
	return t
}

func TestPodTemplate(t *testing.T) {
	check(t, []testCase{
		{name: "valid", obj: podTemplateObj(), gk: podTemplateGK},
		{name: "bad template label", obj: podTemplateObj(func(p *corev1.PodTemplate) { p.Template.Labels = map[string]string{"app": "-web"} }), gk: podTemplateGK,
			want: `PodTemplate "web" is invalid: template.labels: Invalid value: "-web": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`},
		{name: "no containers", obj: podTemplateObj(func(p *corev1.PodTemplate) { p.Template.Spec.Containers = nil }), gk: podTemplateGK,
			want: `PodTemplate "web" is invalid: template.spec.containers: Required value`},
		{name: "ephemeral containers", obj: podTemplateObj(func(p *corev1.PodTemplate) {
			p.Template.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "e", Image: "i",
				ImagePullPolicy: corev1.PullAlways, TerminationMessagePolicy: corev1.TerminationMessageReadFile}}}
		}), gk: podTemplateGK,
			want: `PodTemplate "web" is invalid: template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template`},
		{name: "bad name", obj: podTemplateObj(func(p *corev1.PodTemplate) { p.Name = "Web" }), gk: podTemplateGK,
			want: `PodTemplate "Web" is invalid: metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		// Unlike a Deployment's, the whole template may change.
		{name: "update image and labels", op: update, gk: podTemplateGK, old: podTemplateObj(), obj: podTemplateObj(func(p *corev1.PodTemplate) {
			p.Template.Spec.Containers[0].Image = "nginx:1.27"
			p.Template.Labels = map[string]string{"app": "api"}
		})},
		{name: "update to an invalid template", op: update, gk: podTemplateGK, old: podTemplateObj(), obj: podTemplateObj(func(p *corev1.PodTemplate) {
			p.Template.Spec.RestartPolicy = "Sometimes"
		}), want: `PodTemplate "web" is invalid: template.spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`},
	})
}
