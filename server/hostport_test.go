package server

import (
	"net"
	"strconv"
	"testing"
)

func TestHostPortIsJoinHostPort(t *testing.T) {
	for _, tc := range []struct {
		host string
		port uint32
	}{
		{"10.1.2.3", 51234},
		{"2001:db8::1", 443},
		{"::1", 0},
		{"", 8080},
		{"fe80::1%eth0", 65535},
		{"a-very-long-host-name-that-does-not-fit-in-the-stack-buffer.example.com", 8443},
	} {
		t.Run(tc.host, func(t *testing.T) {
			want := net.JoinHostPort(tc.host, strconv.FormatUint(uint64(tc.port), 10))
			if got := hostPort(tc.host, tc.port); got != want {
				t.Errorf("hostPort(%q, %d) = %q, want %q", tc.host, tc.port, got, want)
			}
		})
	}
}
