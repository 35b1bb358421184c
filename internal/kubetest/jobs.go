package kubetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// RunJobs plays the Job controller and the kubelet for the Jobs created from now until
// the test ends (Helm hooks wait for theirs): run gets each new Job's first container and
// does its work, and the Job is then marked Complete, or Failed when run fails.
func (e *Env) RunJobs(t testing.TB, run func(job *batchv1.Job, c corev1.Container) error) {
	t.Helper()
	c, _ := e.Clients(t)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.BatchV1().Jobs(metav1.NamespaceAll).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); w.Stop(); <-done })
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			job, ok := ev.Object.(*batchv1.Job)
			if ev.Type != watch.Added || !ok || len(job.Spec.Template.Spec.Containers) == 0 {
				continue
			}
			err := run(job, job.Spec.Template.Spec.Containers[0])
			if err := finish(ctx, c, job, err); err != nil && ctx.Err() == nil {
				t.Errorf("kubetest: Job %s/%s: writing its status: %v", job.Namespace, job.Name, err)
			}
		}
	}()
}

// finish writes the status the Job controller writes when the Job's pod ended.
func finish(ctx context.Context, c kubernetes.Interface, job *batchv1.Job, runErr error) error {
	now := metav1.NewTime(time.Now().Truncate(time.Second))
	job.Status.StartTime = &now
	if runErr != nil {
		job.Status.Failed = 1
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: runErr.Error(), LastProbeTime: now, LastTransitionTime: now},
			{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: runErr.Error(), LastProbeTime: now, LastTransitionTime: now},
		}
	} else {
		job.Status.Succeeded = 1
		job.Status.CompletionTime = &now
		job.Status.Conditions = []batchv1.JobCondition{
			{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
			{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastProbeTime: now, LastTransitionTime: now},
		}
	}
	ready, terminating := int32(0), int32(0)
	job.Status.Ready, job.Status.Terminating = &ready, &terminating
	_, err := c.BatchV1().Jobs(job.Namespace).UpdateStatus(ctx, job, metav1.UpdateOptions{})
	return err
}

// KubeconfigOf is a kubeconfig file that acts as the ServiceAccount ns/sa, with a token
// the API server issues for it (as the kubelet mounts one into a pod).
func (e *Env) KubeconfigOf(ns, sa string) (string, error) {
	c, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return "", err
	}
	tr, err := c.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("a token for ServiceAccount %s/%s: %w", ns, sa, err)
	}
	return e.KubeconfigFor(ns+"-"+sa, tr.Status.Token)
}
