package serviceaccount

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Live checks that what a verified token names still exists, as kube's
// validator does: the service account with the same uid, and the pod,
// secret or node it is bound to. A deleted service account makes the token
// invalid. The node of a pod-bound token (kube's
// ServiceAccountTokenPodNodeInfo) is not checked: the pod is what the token
// is bound to, and its node is only reported (the user's extra).
func (o Objects) Live(ctx context.Context, c *Claims, now time.Time) error {
	k := c.Kubernetes
	// An object marked for deletion more than the leeway ago no longer
	// backs tokens.
	gone := func(ts *metav1.Time) bool { return ts != nil && ts.Time.Before(now.Add(-time.Minute)) }
	sa, err := o.ServiceAccount(ctx, k.Namespace, k.ServiceAccount.Name)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("serviceaccounts %q not found", k.ServiceAccount.Name)
		}
		return err
	}
	if string(sa.UID) != k.ServiceAccount.UID {
		return fmt.Errorf("service account UID (%s) does not match claim (%s)", sa.UID, k.ServiceAccount.UID)
	}
	if gone(sa.DeletionTimestamp) {
		return fmt.Errorf("service account %s/%s has been deleted", k.Namespace, k.ServiceAccount.Name)
	}
	if ref := k.Secret; ref != nil {
		sec, err := o.Secret(ctx, k.Namespace, ref.Name)
		if err != nil {
			return errors.New("service account token has been invalidated")
		}
		if string(sec.UID) != ref.UID {
			return fmt.Errorf("secret UID (%s) does not match service account secret ref claim (%s)", sec.UID, ref.UID)
		}
		if gone(sec.DeletionTimestamp) {
			return errors.New("service account token has been invalidated")
		}
	}
	if ref := k.Pod; ref != nil {
		pod, err := o.Pod(ctx, k.Namespace, ref.Name)
		if err != nil {
			return errors.New("service account token has been invalidated")
		}
		if string(pod.UID) != ref.UID {
			return fmt.Errorf("pod UID (%s) does not match service account pod ref claim (%s)", pod.UID, ref.UID)
		}
		if gone(pod.DeletionTimestamp) {
			return errors.New("service account token has been invalidated")
		}
	}
	// A token bound to a node (kube's ServiceAccountTokenNodeBindingValidation).
	if ref := k.Node; ref != nil && k.Pod == nil {
		node, err := o.Node(ctx, ref.Name)
		if err != nil {
			return errors.New("service account token has been invalidated")
		}
		if string(node.UID) != ref.UID {
			return fmt.Errorf("node UID (%s) does not match service account node ref claim (%s)", node.UID, ref.UID)
		}
		if gone(node.DeletionTimestamp) {
			return errors.New("service account token has been invalidated")
		}
	}
	return nil
}
