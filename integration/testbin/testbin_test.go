package testbin

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestWrapRemovesTempDirs(t *testing.T) {
	var dir string
	code := Wrap(func() int {
		dir = TempDir(t, "testbin-test-")
		if err := os.WriteFile(filepath.Join(dir, "gatehouse"), []byte("binary"), 0o755); err != nil {
			t.Fatal(err)
		}
		return 3
	})
	if code != 3 {
		t.Errorf("Wrap returned %d, want run's 3", code)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after Wrap: %v, want it removed", dir, err)
	}
}

func TestTempDirNeedsMain(t *testing.T) {
	temps.mu.Lock()
	saved := temps.wrapped
	temps.wrapped = false
	temps.mu.Unlock()
	defer func() {
		temps.mu.Lock()
		temps.wrapped = saved
		temps.mu.Unlock()
	}()
	_, err := tempDir("testbin-test-")
	if err == nil || !strings.Contains(err.Error(), "os.Exit(testbin.Main(m))") {
		t.Fatalf("tempDir without Main: %v, want an error that says what to add", err)
	}
}

// fakeListener is a closed listener on a given port.
type fakeListener struct{ port int }

func (l fakeListener) Accept() (net.Conn, error) { return nil, errors.New("fake") }
func (l fakeListener) Close() error              { return nil }
func (l fakeListener) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: l.port} }

// TestFreeAddrNeverRepeatsAPort: when the kernel offers a port it offered before,
// FreeAddr asks again rather than return it twice.
func TestFreeAddrNeverRepeatsAPort(t *testing.T) {
	offered := []int{5001, 5001, 5002, 5001, 5002, 5003}
	listen := func() (net.Listener, error) {
		p := offered[0]
		offered = offered[1:]
		return fakeListener{p}, nil
	}
	h := &handedOut{seen: map[int]bool{}}
	var got []string
	for range 3 {
		addr, err := h.free(listen)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, addr)
	}
	want := []string{"127.0.0.1:5001", "127.0.0.1:5002", "127.0.0.1:5003"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("handed out %v, want %v", got, want)
	}
	if len(offered) != 0 {
		t.Errorf("%d offers left, want every repeated one skipped and none more asked for", len(offered))
	}
}

// TestFreeAddrIsBelowTheEphemeralRange: FreeAddr's ports are ones no ":0" listener or
// outgoing connection of another process can be handed, and they can be listened on.
func TestFreeAddrIsBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	for range 20 {
		addr := FreeAddr(t)
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatal(err)
		}
		if p, _ := strconv.Atoi(port); p < 1024 || p >= low {
			t.Fatalf("FreeAddr gave port %d, want one in [1024, %d)", p, low)
		}
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listening on %s: %v", addr, err)
		}
		l.Close()
	}
}
