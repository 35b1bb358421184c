package harness

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// RedisCluster is a Redis Cluster of masters without replicas, started for one test
// with redis-server --cluster-enabled yes and joined with redis-cli --cluster create.
type RedisCluster struct {
	Nodes []*Redis
}

// Addrs are the nodes' addresses.
func (c *RedisCluster) Addrs() []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Addr
	}
	return out
}

// StartRedisCluster starts masters cluster-enabled redis-servers on free 127.0.0.1
// ports, assigns the slots among them and waits until every node says cluster_state:ok.
func StartRedisCluster(t testing.TB, masters int) *RedisCluster {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		mustExist(t, "/usr/bin/redis-server", "redis-server")
	}
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		mustExist(t, "/usr/bin/redis-cli", "redis-server")
	}
	c := &RedisCluster{}
	for i := 0; i < masters; i++ {
		c.Nodes = append(c.Nodes, startClusterNode(t, bin))
	}
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("harness: redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, n := range c.Nodes {
		for {
			info, err := n.Bulk("CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("harness: redis cluster node %s not ok within 20s: %q, %v", n.Addr, info, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return c
}

// startClusterNode starts one cluster-enabled redis-server; its cluster bus port is
// another free port (the default, port+10000, may be past 65535 or taken).
func startClusterNode(t testing.TB, bin string) *Redis {
	t.Helper()
	for attempt := 1; ; attempt++ {
		port, bus := FreePort(t), FreePort(t)
		dir := t.TempDir()
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus), "--cluster-config-file", dir+"/nodes.conf",
			"--cluster-node-timeout", "5000", "--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", dir)
		r := &Redis{Addr: addr(port), p: start(t, "redis-server (cluster node)", cmd)}
		err := r.p.listening(r.Addr, 10*time.Second)
		if errors.Is(err, testbin.ErrExited) && attempt < 3 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
}

// NodeFor returns the node that serves key (by CLUSTER KEYSLOT and CLUSTER NODES).
func (c *RedisCluster) NodeFor(t testing.TB, key string) *Redis {
	t.Helper()
	slot, err := c.Nodes[0].Do("CLUSTER", "KEYSLOT", key)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := strconv.Atoi(strings.TrimPrefix(slot, ":"))
	for _, n := range c.Nodes {
		nodes, err := n.Bulk("CLUSTER", "NODES")
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(nodes, "\n") {
			f := strings.Fields(line)
			if len(f) < 9 || !strings.Contains(f[2], "myself") {
				continue
			}
			for _, r := range f[8:] {
				lo, hi, _ := strings.Cut(r, "-")
				l, _ := strconv.Atoi(lo)
				h := l
				if hi != "" {
					h, _ = strconv.Atoi(hi)
				}
				if s >= l && s <= h {
					return n
				}
			}
		}
	}
	t.Fatalf("harness: no cluster node serves slot %d of %q", s, key)
	return nil
}

// String names the cluster's nodes for messages.
func (c *RedisCluster) String() string { return fmt.Sprint(c.Addrs()) }
