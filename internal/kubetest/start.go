package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Start starts etcd and kube-apiserver on free loopback ports and waits for /readyz.
func Start() (*Env, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	// The ports are free when chosen, but another process may take one before etcd or
	// kube-apiserver binds it: a start that fails is tried again on new ports.
	var errs []error
	for range 3 {
		dir, err := os.MkdirTemp("", "gatehouse-kube-")
		if err != nil {
			return nil, err
		}
		e := &Env{Dir: dir, Kubectl: filepath.Join(assets, "kubectl")}
		if err := e.start(assets); err != nil {
			errs = append(errs, err)
			e.Stop()
			continue
		}
		return e, nil
	}
	return nil, errors.Join(errs...)
}

func (e *Env) start(assets string) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	e.etcd, err = e.run(filepath.Join(assets, "etcd"), "etcd.log",
		"--name=default", "--data-dir="+filepath.Join(e.Dir, "etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	if err != nil {
		return err
	}
	token, err := randomHex(16)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(e.Dir, "tokens.csv"), []byte(token+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		return err
	}
	saKey := filepath.Join(e.Dir, "sa.key")
	if err := writeRSAKey(saKey); err != nil {
		return err
	}
	certDir := filepath.Join(e.Dir, "certs")
	port := ports[2]
	if e.PodNetwork, err = startPodNetwork(); err != nil {
		return err
	}
	// The API server reaches pod IPs through the pod network stand-in; loopback (etcd,
	// itself) is never proxied by Go's environment proxy rules.
	apiserverEnv := []string{"HTTP_PROXY=socks5://" + e.PodNetwork.Addr(), "NO_PROXY=127.0.0.1,localhost"}
	e.apiserver, err = e.runEnv(apiserverEnv, filepath.Join(assets, "kube-apiserver"), "kube-apiserver.log",
		"--etcd-servers="+etcdURL, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--cert-dir="+certDir, "--token-auth-file="+filepath.Join(e.Dir, "tokens.csv"),
		"--authorization-mode=RBAC", "--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+saKey, "--service-account-signing-key-file="+saKey,
		"--service-cluster-ip-range=10.96.0.0/16", "--endpoint-reconciler-type=none",
		"--disable-admission-plugins=ServiceAccount", "--allow-privileged=true")
	if err != nil {
		return err
	}
	e.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(port),
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true}, // a self-signed loopback server
		QPS:             1000, Burst: 2000,
	}
	if err := e.waitReady(); err != nil {
		return err
	}
	return e.writeKubeconfig()
}

// run starts a server with its output in the named log file of e.Dir.
func (e *Env) run(bin, logName string, args ...string) (*exec.Cmd, error) {
	return e.runEnv(nil, bin, logName, args...)
}

// runEnv is run with environment variables added to this process's.
func (e *Env) runEnv(env []string, bin, logName string, args ...string) (*exec.Cmd, error) {
	log, err := os.Create(filepath.Join(e.Dir, logName))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	if e.exited == nil {
		e.exited = map[*exec.Cmd]chan struct{}{}
	}
	done := make(chan struct{})
	e.exited[cmd] = done
	go func() { _ = cmd.Wait(); log.Close(); close(done) }()
	return cmd, nil
}

func (e *Env) waitReady() error {
	rt, err := rest.TransportFor(e.Config)
	if err != nil {
		return err
	}
	client := &http.Client{Transport: rt, Timeout: 2 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for {
		resp, err := client.Get(e.Config.Host + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready after 90s; its log: %s", e.logTail("kube-apiserver.log"))
		case <-e.exited[e.apiserver]:
			return fmt.Errorf("kube-apiserver exited; its log: %s", e.logTail("kube-apiserver.log"))
		case <-e.exited[e.etcd]:
			return fmt.Errorf("etcd exited; its log: %s", e.logTail("etcd.log"))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (e *Env) logTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(e.Dir, name))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

func (e *Env) writeKubeconfig() error {
	e.Kubeconfig = filepath.Join(e.Dir, "kubeconfig")
	return e.writeKubeconfigFile(e.Kubeconfig, e.Config.BearerToken)
}

// KubeconfigFor writes a kubeconfig that authenticates with token (a ServiceAccount's,
// say, to run a component with exactly its RBAC) and returns its path.
func (e *Env) KubeconfigFor(name, token string) (string, error) {
	path := filepath.Join(e.Dir, "kubeconfig-"+name)
	return path, e.writeKubeconfigFile(path, token)
}

func (e *Env) writeKubeconfigFile(path, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["test"] = &clientcmdapi.Cluster{Server: e.Config.Host, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["user"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["test"] = &clientcmdapi.Context{Cluster: "test", AuthInfo: "user", Namespace: "default"}
	cfg.CurrentContext = "test"
	return clientcmd.WriteToFile(*cfg, path)
}

func freePorts(n int) ([]int, error) {
	var out []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func writeRSAKey(path string) error {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	return os.WriteFile(path, b, 0o600)
}
