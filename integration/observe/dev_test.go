package observe_test

import (
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// dev is a running `gatehouse dev` on the embedded examples, with its extauth admin.
type dev struct {
	proc  *testbin.Process
	base  string // http://addr of the gateway
	admin string // http://addr of extauth's admin
}

func startDev(t *testing.T, env []string, extra ...string) *dev {
	t.Helper()
	gw, ex, echo, admin := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	args := append([]string{"dev", "--plugin-dir", testbin.SamplePlugins(t), "--listen", gw, "--extauth-listen", ex, "--echo-listen", echo,
		"--admin-listen", admin}, extra...)
	p := testbin.Start(t, env, testbin.Gatehouse(t), args...)
	testbin.WaitTCP(t, p, gw, 20*time.Second)
	return &dev{proc: p, base: "http://" + gw, admin: "http://" + admin}
}

// get sends GET / through the gateway with headers and returns the status.
func (d *dev) get(t *testing.T, headers map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, d.base+"/?q=hidden-query", nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// randomHex is n random bytes in hex, for trace and span ids.
func randomHex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rand.IntN(256))
	}
	return hex.EncodeToString(b)
}
