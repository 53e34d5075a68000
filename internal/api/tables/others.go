package tables

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	rbacv1beta1 "k8s.io/api/rbac/v1beta1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
)

// ingressClassDefaultAnnotation marks the cluster's default IngressClass.
const ingressClassDefaultAnnotation = "ingressclass.kubernetes.io/is-default-class"

func init() {
	register("coordination.k8s.io", "leases", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Holder", Type: "string", Description: coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]},
		ageColumn,
	}, func(l *coordinationv1.Lease, now time.Time) metav1.TableRow {
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		return metav1.TableRow{Cells: []any{l.Name, holder, age(l.CreationTimestamp, now)}}
	}))

	register("discovery.k8s.io", "endpointslices", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "AddressType", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["addressType"]},
		{Name: "Ports", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["ports"]},
		{Name: "Endpoints", Type: "string", Description: discoveryv1.EndpointSlice{}.SwaggerDoc()["endpoints"]},
		ageColumn,
	}, endpointSliceRow))

	// roles and clusterroles keep kube's default NAME / CREATED AT: kube
	// registers no printer for them.
	register("rbac.authorization.k8s.io", "rolebindings", typed(bindingColumns(
		rbacv1beta1.RoleBinding{}.SwaggerDoc()["roleRef"], "roleBinding",
	), func(b *rbacv1.RoleBinding, now time.Time) metav1.TableRow {
		return bindingRow(b.ObjectMeta, b.RoleRef, b.Subjects, now)
	}))
	register("rbac.authorization.k8s.io", "clusterrolebindings", typed(bindingColumns(
		rbacv1beta1.ClusterRoleBinding{}.SwaggerDoc()["roleRef"], "clusterRoleBinding",
	), func(b *rbacv1.ClusterRoleBinding, now time.Time) metav1.TableRow {
		return bindingRow(b.ObjectMeta, b.RoleRef, b.Subjects, now)
	}))

	webhookColumns := []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Webhooks", Type: "integer", Description: "Webhooks indicates the number of webhooks registered in this configuration"},
		ageColumn,
	}
	register("admissionregistration.k8s.io", "mutatingwebhookconfigurations", typed(webhookColumns,
		func(c *admissionregistrationv1.MutatingWebhookConfiguration, now time.Time) metav1.TableRow {
			return metav1.TableRow{Cells: []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}}
		}))
	register("admissionregistration.k8s.io", "validatingwebhookconfigurations", typed(webhookColumns,
		func(c *admissionregistrationv1.ValidatingWebhookConfiguration, now time.Time) metav1.TableRow {
			return metav1.TableRow{Cells: []any{c.Name, int64(len(c.Webhooks)), age(c.CreationTimestamp, now)}}
		}))

	register("admissionregistration.k8s.io", "validatingadmissionpolicies", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Validations", Type: "integer", Description: "Validations indicates the number of validation rules defined in this configuration"},
		{Name: "ParamKind", Type: "string", Description: "ParamKind specifies the kind of resources used to parameterize this policy"},
		ageColumn,
	}, func(p *admissionregistrationv1.ValidatingAdmissionPolicy, now time.Time) metav1.TableRow {
		paramKind := "<unset>"
		if k := p.Spec.ParamKind; k != nil {
			paramKind = k.APIVersion + "/" + k.Kind
		}
		return metav1.TableRow{Cells: []any{p.Name, int64(len(p.Spec.Validations)), paramKind, age(p.CreationTimestamp, now)}}
	}))
	register("admissionregistration.k8s.io", "validatingadmissionpolicybindings", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "PolicyName", Type: "string", Description: "PolicyName indicates the policy definition which the policy binding binded to"},
		{Name: "ParamRef", Type: "string", Description: "ParamRef indicates the param resource which sets the configration param"},
		ageColumn,
	}, func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding, now time.Time) metav1.TableRow {
		param := "<unset>"
		if pr := b.Spec.ParamRef; pr != nil {
			switch {
			case pr.Name != "" && pr.Namespace != "":
				param = pr.Namespace + "/" + pr.Name
			case pr.Name != "":
				// A cluster-scoped param cannot be told apart here.
				param = "*/" + pr.Name
			case pr.Selector != nil:
				param = pr.Selector.String()
			}
		}
		return metav1.TableRow{Cells: []any{b.Name, b.Spec.PolicyName, param, age(b.CreationTimestamp, now)}}
	}))

	// PreemptionPolicy has priority 0 in kube, so kubectl shows it
	// without -o wide.
	register("scheduling.k8s.io", "priorityclasses", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Value", Type: "integer", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["value"]},
		{Name: "Global-Default", Type: "boolean", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["globalDefault"]},
		ageColumn,
		{Name: "PreemptionPolicy", Type: "string", Description: schedulingv1.PriorityClass{}.SwaggerDoc()["preemptionPolicy"]},
	}, func(pc *schedulingv1.PriorityClass, now time.Time) metav1.TableRow {
		policy := ""
		if pc.PreemptionPolicy != nil {
			policy = string(*pc.PreemptionPolicy)
		}
		return metav1.TableRow{Cells: []any{pc.Name, int64(pc.Value), pc.GlobalDefault, age(pc.CreationTimestamp, now), policy}}
	}))

	register("batch", "jobs", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Status", Type: "string", Description: "Status of the job."},
		{Name: "Completions", Type: "string", Description: batchv1.JobStatus{}.SwaggerDoc()["succeeded"]},
		{Name: "Duration", Type: "string", Description: "Time required to complete the job."},
		ageColumn,
		containersWide,
		imagesWide,
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	}, jobRow))

	register("batch", "cronjobs", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Schedule", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]},
		{Name: "Timezone", Type: "string", Description: batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]},
		{Name: "Suspend", Type: "boolean", Description: batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]},
		{Name: "Active", Type: "integer", Description: batchv1.CronJobStatus{}.SwaggerDoc()["active"]},
		{Name: "Last Schedule", Type: "string", Description: batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]},
		ageColumn,
		containersWide,
		imagesWide,
		{Name: "Selector", Type: "string", Priority: 1, Description: batchv1.JobSpec{}.SwaggerDoc()["selector"]},
	}, cronJobRow))

	register("networking.k8s.io", "ingresses", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Class", Type: "string", Description: "The name of the IngressClass resource that should be used for additional configuration"},
		{Name: "Hosts", Type: "string", Description: "Hosts that incoming requests are matched against before the ingress rule"},
		{Name: "Address", Type: "string", Description: "Address is a list containing ingress points for the load-balancer"},
		{Name: "Ports", Type: "string", Description: "Ports of TLS configurations that open"},
		ageColumn,
	}, ingressRow))

	register("networking.k8s.io", "ingressclasses", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Controller", Type: "string", Description: "Controller that is responsible for handling this class"},
		{Name: "Parameters", Type: "string", Description: "A reference to a resource with additional parameters"},
		ageColumn,
	}, func(ic *networkingv1.IngressClass, now time.Time) metav1.TableRow {
		name := ic.Name
		if ic.Annotations[ingressClassDefaultAnnotation] == "true" {
			name += " (default)"
		}
		params := "<none>"
		if p := ic.Spec.Parameters; p != nil {
			params = p.Kind
			if p.APIGroup != nil {
				params += "." + *p.APIGroup
			}
			params += "/" + p.Name
		}
		return metav1.TableRow{Cells: []any{name, ic.Spec.Controller, params, age(ic.CreationTimestamp, now)}}
	}))

	register("networking.k8s.io", "networkpolicies", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Pod-Selector", Type: "string", Description: networkingv1.NetworkPolicySpec{}.SwaggerDoc()["podSelector"]},
		ageColumn,
	}, func(np *networkingv1.NetworkPolicy, now time.Time) metav1.TableRow {
		return metav1.TableRow{Cells: []any{np.Name, metav1.FormatLabelSelector(&np.Spec.PodSelector), age(np.CreationTimestamp, now)}}
	}))

	register("policy", "poddisruptionbudgets", typed([]metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Min Available", Type: "string", Description: "The minimum number of pods that must be available."},
		{Name: "Max Unavailable", Type: "string", Description: "The maximum number of pods that may be unavailable."},
		{Name: "Allowed Disruptions", Type: "integer", Description: "Calculated number of pods that may be disrupted at this time."},
		ageColumn,
	}, func(pdb *policyv1.PodDisruptionBudget, now time.Time) metav1.TableRow {
		minAvailable, maxUnavailable := "N/A", "N/A"
		if pdb.Spec.MinAvailable != nil {
			minAvailable = pdb.Spec.MinAvailable.String()
		}
		if pdb.Spec.MaxUnavailable != nil {
			maxUnavailable = pdb.Spec.MaxUnavailable.String()
		}
		return metav1.TableRow{Cells: []any{pdb.Name, minAvailable, maxUnavailable, int64(pdb.Status.DisruptionsAllowed), age(pdb.CreationTimestamp, now)}}
	}))
}

func endpointSliceRow(s *discoveryv1.EndpointSlice, now time.Time) metav1.TableRow {
	ports := make([]string, 0, len(s.Ports))
	for _, p := range s.Ports {
		switch {
		case p.Port != nil:
			ports = append(ports, strconv.Itoa(int(*p.Port)))
		case p.Name != nil:
			ports = append(ports, *p.Name)
		default:
			ports = append(ports, "*")
		}
	}
	var addrs []string
	for _, e := range s.Endpoints {
		addrs = append(addrs, e.Addresses...)
	}
	return metav1.TableRow{Cells: []any{s.Name, string(s.AddressType), listWithMore(ports, 3), listWithMore(addrs, 3), age(s.CreationTimestamp, now)}}
}

func bindingColumns(roleRefDoc, kind string) []metav1.TableColumnDefinition {
	return []metav1.TableColumnDefinition{
		nameColumn,
		{Name: "Role", Type: "string", Description: roleRefDoc},
		ageColumn,
		{Name: "Users", Type: "string", Priority: 1, Description: "Users in the " + kind},
		{Name: "Groups", Type: "string", Priority: 1, Description: "Groups in the " + kind},
		{Name: "ServiceAccounts", Type: "string", Priority: 1, Description: "ServiceAccounts in the " + kind},
	}
}

// bindingRow prints ROLE as Kind/name and the subjects by kind; service
// accounts as namespace/name.
func bindingRow(m metav1.ObjectMeta, ref rbacv1.RoleRef, subjects []rbacv1.Subject, now time.Time) metav1.TableRow {
	var users, groups, sas []string
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			sas = append(sas, s.Namespace+"/"+s.Name)
		case rbacv1.UserKind:
			users = append(users, s.Name)
		case rbacv1.GroupKind:
			groups = append(groups, s.Name)
		}
	}
	return metav1.TableRow{Cells: []any{
		m.Name,
		ref.Kind + "/" + ref.Name,
		age(m.CreationTimestamp, now),
		strings.Join(users, ", "),
		strings.Join(groups, ", "),
		strings.Join(sas, ", "),
	}}
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func jobRow(j *batchv1.Job, now time.Time) metav1.TableRow {
	var completions string
	switch {
	case j.Spec.Completions != nil:
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	case j.Spec.Parallelism != nil && *j.Spec.Parallelism > 1:
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, *j.Spec.Parallelism)
	default:
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}

	var jobDuration string
	switch {
	case j.Status.StartTime == nil:
	case j.Status.CompletionTime == nil:
		jobDuration = duration.HumanDuration(now.Sub(j.Status.StartTime.Time))
	default:
		jobDuration = duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
	}

	// Terminal conditions outrank deletion, which outranks the rest.
	var status string
	switch {
	case jobCondition(j, batchv1.JobComplete):
		status = "Complete"
	case jobCondition(j, batchv1.JobFailed):
		status = "Failed"
	case j.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(j, batchv1.JobSuspended):
		status = "Suspended"
	case jobCondition(j, batchv1.JobFailureTarget):
		status = "FailureTarget"
	case jobCondition(j, batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	default:
		status = "Running"
	}

	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return metav1.TableRow{Cells: []any{
		j.Name, status, completions, jobDuration, age(j.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(j.Spec.Selector),
	}}
}

func cronJobRow(cj *batchv1.CronJob, now time.Time) metav1.TableRow {
	last := "<none>"
	if cj.Status.LastScheduleTime != nil {
		last = age(*cj.Status.LastScheduleTime, now)
	}
	tz := "<none>"
	if cj.Spec.TimeZone != nil {
		tz = *cj.Spec.TimeZone
	}
	suspend := "<unset>"
	if cj.Spec.Suspend != nil {
		suspend = "False"
		if *cj.Spec.Suspend {
			suspend = "True"
		}
	}
	tmpl := cj.Spec.JobTemplate.Spec
	names, images := containerCells(tmpl.Template.Spec.Containers)
	return metav1.TableRow{Cells: []any{
		cj.Name, cj.Spec.Schedule, tz, suspend, int64(len(cj.Status.Active)), last, age(cj.CreationTimestamp, now),
		names, images, metav1.FormatLabelSelector(tmpl.Selector),
	}}
}

func ingressRow(ing *networkingv1.Ingress, now time.Time) metav1.TableRow {
	class := "<none>"
	if ing.Spec.IngressClassName != nil {
		class = *ing.Spec.IngressClassName
	}

	// Up to three hosts. Any rule after the third host adds "+ N more...",
	// where kube counts N in rules, hosts or not.
	const max = 3
	var hosts []string
	more := false
	for _, r := range ing.Spec.Rules {
		if len(hosts) == max {
			more = true
			break
		}
		if r.Host != "" {
			hosts = append(hosts, r.Host)
		}
	}
	hostsCell := "*"
	if len(hosts) > 0 {
		hostsCell = strings.Join(hosts, ",")
		if more {
			hostsCell = fmt.Sprintf("%s + %d more...", hostsCell, len(ing.Spec.Rules)-max)
		}
	}

	var lb []corev1.LoadBalancerIngress
	for _, in := range ing.Status.LoadBalancer.Ingress {
		lb = append(lb, corev1.LoadBalancerIngress{IP: in.IP, Hostname: in.Hostname})
	}
	ports := "80"
	if len(ing.Spec.TLS) > 0 {
		ports = "80, 443"
	}
	return metav1.TableRow{Cells: []any{ing.Name, class, hostsCell, strings.Join(loadBalancerIngress(lb), ","), ports, age(ing.CreationTimestamp, now)}}
}
