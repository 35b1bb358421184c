package harness

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
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
		if errors.Is(err, testbin.ErrExited) && attempt < 3 {
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
	var line string
	err := r.exchange(args, func(br *bufio.Reader) (err error) {
		line, err = br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		return err
	})
	return line, err
}

// exchange sends one command on a connection of its own and lets read take the reply.
func (r *Redis) exchange(args []string, read func(*bufio.Reader) error) error {
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(command(args))); err != nil {
		return err
	}
	return read(bufio.NewReader(c))
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

// Bulk sends one command whose reply is a bulk string (INFO, CLUSTER INFO, CLUSTER
// NODES, GET) and returns that string; a nil reply is "".
func (r *Redis) Bulk(args ...string) (string, error) {
	var bulk string
	err := r.exchange(args, func(br *bufio.Reader) error {
		line, err := br.ReadString('\n')
		if err != nil {
			return err
		}
		line = strings.TrimRight(line, "\r\n")
		n, err := strconv.Atoi(strings.TrimPrefix(line, "$"))
		switch {
		case !strings.HasPrefix(line, "$") || err != nil:
			return fmt.Errorf("harness: redis %s answered %q, not a bulk string", args[0], line)
		case n < 0:
			return nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return err
		}
		bulk = string(b[:n])
		return nil
	})
	return bulk, err
}

// CommandCalls is how many times the server ran cmd (lower case, as INFO
// commandstats names it, such as "get"), from INFO commandstats.
func (r *Redis) CommandCalls(t testing.TB, cmd string) int {
	t.Helper()
	info, err := r.Bulk("INFO", "commandstats")
	if err != nil {
		t.Fatalf("harness: redis INFO commandstats: %v", err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		rest, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(strings.Split(rest, ",")[0])
		return n
	}
	return 0
}

func command(args []string) string {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return b.String()
}
