package helm_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"

	"gatehouse.dev/gatehouse/internal/version"
)

func ptr[T any](v T) *T { return &v }

func intstrName(name string) intstr.IntOrString { return intstr.FromString(name) }

func intstrInt(port int) intstr.IntOrString { return intstr.FromInt(port) }

var (
	pluginMount = corev1.VolumeMount{Name: "auth-plugins", MountPath: "/auth-plugins"}
	tmpMount    = corev1.VolumeMount{Name: "tmp", MountPath: "/tmp"}
	configMount = corev1.VolumeMount{Name: "config", MountPath: "/etc/gatehouse/config", ReadOnly: true}
	grpcPort    = corev1.ContainerPort{Name: "grpc", ContainerPort: 8083, Protocol: corev1.ProtocolTCP}
	adminPort   = corev1.ContainerPort{Name: "http-admin", ContainerPort: 9091, Protocol: corev1.ProtocolTCP}
	baseArgs    = []string{"extauth", "--plugin-dir", "/auth-plugins", "--listen", ":8083", "--config", "/etc/gatehouse/config"}
	volumes     = []corev1.Volume{
		{Name: "auth-plugins", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		configVolume("extauth-config"),
	}
)

// configVolume is the config volume of a ConfigMap.
func configVolume(configMap string) corev1.Volume {
	return corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}},
	}}
}

func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr(true),
		ReadOnlyRootFilesystem:   ptr(true),
		AllowPrivilegeEscalation: ptr(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func pluginContainer(key, image string, policy corev1.PullPolicy) corev1.Container {
	return corev1.Container{
		Name: "plugin-" + key, Image: image, ImagePullPolicy: policy,
		SecurityContext: containerSecurity(),
		VolumeMounts:    []corev1.VolumeMount{pluginMount},
	}
}

// podSpec is the pod the default values give; cases change what their values change.
func podSpec(edit func(s *corev1.PodSpec, c *corev1.Container)) corev1.PodSpec {
	grpcProbe := corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8083}}
	livenessProbe := corev1.ProbeHandler{GRPC: &corev1.GRPCAction{Port: 8083, Service: ptr("liveness")}}
	c := corev1.Container{
		Name:            "extauth",
		Image:           "docker.io/gatehouse/extauth:" + version.Version,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            append(append([]string(nil), baseArgs...), "--admin-listen", ":9091"),
		Env:             []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"}, {Name: "START_STATS_SERVER", Value: "true"}},
		Ports:           []corev1.ContainerPort{grpcPort, adminPort},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: grpcProbe, PeriodSeconds: 5},
		LivenessProbe:   &corev1.Probe{ProbeHandler: livenessProbe, InitialDelaySeconds: 10, PeriodSeconds: 10},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		SecurityContext: containerSecurity(),
		VolumeMounts:    []corev1.VolumeMount{pluginMount, tmpMount, configMount},
	}
	s := corev1.PodSpec{
		AutomountServiceAccountToken:  ptr(false),
		TerminationGracePeriodSeconds: ptr(int64(30)),
		SecurityContext: &corev1.PodSecurityContext{
			RunAsNonRoot: ptr(true), RunAsUser: ptr(int64(65532)), RunAsGroup: ptr(int64(65532)), FSGroup: ptr(int64(65532)),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		Volumes: append([]corev1.Volume(nil), volumes...),
	}
	if edit != nil {
		edit(&s, &c)
	}
	s.Containers = []corev1.Container{c}
	return s
}

func TestDeploymentRendering(t *testing.T) {
	tests := []struct {
		name   string
		values string
		want   corev1.PodSpec
	}{
		{
			name: "defaults, no plugins",
			want: podSpec(nil),
		},
		{
			name: "two plugins, with and without tag, in key order",
			values: `
global:
  extensions:
    extAuth:
      plugins:
        zeta:
          image: {registry: quay.example, repository: team/zeta-plugins, tag: 0.0.9, pullPolicy: Always}
        alpha:
          image: {repository: my-org/alpha-plugins}
`,
			want: podSpec(func(s *corev1.PodSpec, _ *corev1.Container) {
				s.InitContainers = []corev1.Container{
					pluginContainer("alpha", "my-org/alpha-plugins:"+version.Version, corev1.PullIfNotPresent),
					pluginContainer("zeta", "quay.example/team/zeta-plugins:0.0.9", corev1.PullAlways),
				}
			}),
		},
		{
			name: "AuthConfigs in values: the chart's ConfigMap, at the default path",
			values: `
global:
  extensions:
    extAuth:
      config:
        authConfigs: |
          apiVersion: enterprise.gateway.gatehouse.dev/v1
          kind: AuthConfig
          metadata: {name: a}
          spec: {configs: [{pluginAuth: {name: p}}]}
`,
			want: podSpec(nil),
		},
		{
			name: "log level, stats off, own config map at a path",
			values: `
global:
  extensions:
    extAuth:
      config: {configMap: auth-configs, path: /config/auth}
      deployment:
        logLevel: debug
        stats: {enabled: false}
        image: {registry: r.example, repository: gh/extauth, tag: dev, pullPolicy: Never}
        resources: {requests: {cpu: 1}}
`,
			want: podSpec(func(s *corev1.PodSpec, c *corev1.Container) {
				c.Image, c.ImagePullPolicy = "r.example/gh/extauth:dev", corev1.PullNever
				c.Args = []string{"extauth", "--plugin-dir", "/auth-plugins", "--listen", ":8083", "--config", "/config/auth"}
				c.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}}
				c.Ports = []corev1.ContainerPort{grpcPort}
				c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("128Mi")}
				c.VolumeMounts = []corev1.VolumeMount{pluginMount, tmpMount, {Name: "config", MountPath: "/config/auth", ReadOnly: true}}
				s.Volumes = []corev1.Volume{volumes[0], volumes[1], configVolume("auth-configs")}
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := render(t, tt.values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			d := r.deployment
			if diff := cmp.Diff(tt.want, d.Spec.Template.Spec, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("pod spec (-want +got):\n%s", diff)
			}
			if d.Name != "extauth" || d.Namespace != "auth" {
				t.Errorf("deployment %s/%s, want auth/extauth", d.Namespace, d.Name)
			}
			if diff := cmp.Diff(map[string]string{"gatehouse": "extauth"}, d.Spec.Selector.MatchLabels); diff != "" {
				t.Errorf("selector (-want +got):\n%s", diff)
			}
			for what, labels := range map[string]map[string]string{"deployment": d.Labels, "pod": d.Spec.Template.Labels} {
				if labels["gatehouse"] != "extauth" || labels["app.kubernetes.io/instance"] != "gh" || labels["app.kubernetes.io/version"] != version.Version {
					t.Errorf("%s labels = %v", what, labels)
				}
			}
			for _, ic := range d.Spec.Template.Spec.InitContainers {
				if !hasMount(ic, pluginMount) || !hasMount(d.Spec.Template.Spec.Containers[0], pluginMount) {
					t.Errorf("init container %s and extauth must both mount auth-plugins at /auth-plugins", ic.Name)
				}
			}
		})
	}
}

func hasMount(c corev1.Container, m corev1.VolumeMount) bool {
	for _, got := range c.VolumeMounts {
		if got.Name == m.Name && got.MountPath == m.MountPath {
			return true
		}
	}
	return false
}

func TestNotes(t *testing.T) {
	tests := []struct {
		name          string
		values        string
		want, wantNot []string
	}{
		{
			name:    "defaults: an empty config and the admin port",
			want:    []string{"extauth.auth.svc:8083", "ConfigMap extauth-config", "mounted at /etc/gatehouse/config", "It holds none yet", "curl -s localhost:9091/auth-configs"},
			wantNot: []string{"your ConfigMap"},
		},
		{
			name:    "plugin images and AuthConfigs",
			values:  "global: {extensions: {extAuth: {config: {authConfigs: 'kind: AuthConfig'}, plugins: {mine: {image: {repository: my-org/plugins}}}}}}",
			want:    []string{"plugin-mine: my-org/plugins:" + version.Version, "ConfigMap extauth-config, from global.extensions.extAuth.config.authConfigs"},
			wantNot: []string{"It holds none yet", "No plugin images"},
		},
		{
			name:    "own ConfigMap at a path, stats off",
			values:  "global: {extensions: {extAuth: {config: {configMap: mine, path: /config}, deployment: {stats: {enabled: false}}}}}",
			want:    []string{"your ConfigMap mine, mounted at /config"},
			wantNot: []string{"extauth-config", "It holds none yet", "9091"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := render(t, tt.values)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tt.want {
				if !strings.Contains(r.notes, want) {
					t.Errorf("NOTES.txt does not contain %q:\n%s", want, r.notes)
				}
			}
			for _, not := range tt.wantNot {
				if strings.Contains(r.notes, not) {
					t.Errorf("NOTES.txt contains %q:\n%s", not, r.notes)
				}
			}
		})
	}
}
