package kube_test

import (
	"fmt"
	"os/exec"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// runCertJobs does the work of the chart's certificate Jobs (the install hook) while the
// test runs: `gatehouse certs kube` with the Job's arguments, as the Job's ServiceAccount,
// so the chart's Role must be enough for it.
func runCertJobs(t *testing.T, gh string) {
	t.Helper()
	env.RunJobs(t, func(job *batchv1.Job, c corev1.Container) error {
		if len(c.Args) < 2 || c.Args[0] != "certs" || c.Args[1] != "kube" {
			return fmt.Errorf("Job %s runs %q, not gatehouse certs kube", job.Name, c.Args)
		}
		kc, err := env.KubeconfigOf(job.Namespace, job.Spec.Template.Spec.ServiceAccountName)
		if err != nil {
			t.Errorf("Job %s/%s: %v", job.Namespace, job.Name, err)
			return err
		}
		out, err := exec.Command(gh, append(append([]string(nil), c.Args...), "--kubeconfig", kc)...).CombinedOutput()
		if err != nil {
			t.Errorf("Job %s/%s: gatehouse %q: %v\n%s", job.Namespace, job.Name, c.Args, err, out)
			return err
		}
		return nil
	})
}
