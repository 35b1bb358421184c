package testbin

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// adminClient bounds each request, so a poll that meets a server which never answers
// tries again instead of hanging the test.
var adminClient = &http.Client{Timeout: 10 * time.Second}

// Get is the status and body of GET url, as the admin endpoints (/metrics, /ready,
// /snapshots/xds) answer it.
func Get(url string) (int, string, error) {
	resp, err := adminClient.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// Scrape is the /metrics of the admin server at addr.
func Scrape(addr string) (string, error) {
	_, body, err := Get("http://" + addr + "/metrics")
	return body, err
}

// Metric is the sum of the samples of series on the /metrics of the admin server at
// addr, 0 when there are none. series is a metric name (every label set counts) or a
// name with its labels, `name{label="value"}` as /metrics writes it (that sample alone).
func Metric(addr, series string) (float64, error) {
	body, err := Scrape(addr)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, series+"{") || strings.HasPrefix(line, series+" ") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, err
			}
			sum += v
		}
	}
	return sum, nil
}
