package benchkit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Get is the body of url when it answers 200.
func Get(ctx context.Context, url string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, fmt.Errorf("fetching %s: %s", url, resp.Status)
	}
	return resp.Body, nil
}

// FetchProfile writes what url answers to file.
func FetchProfile(ctx context.Context, url, file string) error {
	body, err := Get(ctx, url)
	if err != nil {
		return err
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o666)
}

// Metric sums every sample of the metric name (whatever its labels) that a Prometheus
// text endpoint at url serves; 0 when it serves none.
func Metric(ctx context.Context, url, name string) (float64, error) {
	body, err := Get(ctx, url)
	if err != nil {
		return 0, err
	}
	defer body.Close()
	var sum float64
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || rest[0] != ' ' && rest[0] != '{' {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum, sc.Err()
}

// WaitPort polls addr until it accepts a connection (a gRPC client that finds it
// closed would back off for a second, which would count in a start time), or p exits.
func WaitPort(ctx context.Context, p *Proc, addr string) error {
	return Poll(ctx, p, 2*time.Minute, 2*time.Millisecond, func(context.Context) error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}
