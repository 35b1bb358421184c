package harness

import (
	"bufio"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Redis is a redis-server started for one test, with no persistence.
type Redis struct {
	Addr string
	p    *process
}

// StartRedis starts redis-server on a free 127.0.0.1 port and waits for PONG.
func StartRedis(t testing.TB) *Redis {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		mustExist(t, "/usr/bin/redis-server", "redis-server")
	}
	// A free port can be taken by someone else before redis-server binds it (tests
	// run in parallel); then redis-server exits at once and another port is tried.
	for attempt := 1; ; attempt++ {
		port := FreePort(t)
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--daemonize", "no", "--dir", t.TempDir())
		r := &Redis{Addr: addr(port), p: start(t, "redis-server", cmd)}
		err := r.p.listening(r.Addr, 10*time.Second)
		if errors.Is(err, errExited) && attempt < 3 {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.Do("PING"); err != nil || got != "+PONG" {
			t.Fatalf("harness: redis-server on %s answered PING with %q, %v", r.Addr, got, err)
		}
		return r
	}
}

// Stop stops the server now (the tests of an unreachable store use this).
func (r *Redis) Stop() { r.p.stop() }

// Do sends one command and returns the first line of the reply, such as "+PONG",
// ":1" or "$-1" for a missing key.
func (r *Redis) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimRight(line, "\r\n"), err
}

// Exists reports whether key is set.
func (r *Redis) Exists(t testing.TB, key string) bool {
	t.Helper()
	got, err := r.Do("EXISTS", key)
	if err != nil {
		t.Fatalf("harness: redis EXISTS: %v", err)
	}
	return got == ":1"
}
