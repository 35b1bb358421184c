package main

import (
	"encoding/json"
	"fmt"
	"time"
)

// ghzResult is what the report takes from ghz's JSON output.
type ghzResult struct {
	Count  int64
	RPS    float64
	P50    time.Duration
	P99    time.Duration
	Errors int64 // calls that did not end with gRPC status OK
}

// parseGhz reads ghz -O json output. Durations there are nanoseconds.
func parseGhz(b []byte) (ghzResult, error) {
	var doc struct {
		Count        int64            `json:"count"`
		RPS          float64          `json:"rps"`
		Statuses     map[string]int64 `json:"statusCodeDistribution"`
		Distribution []struct {
			Percentage int           `json:"percentage"`
			Latency    time.Duration `json:"latency"`
		} `json:"latencyDistribution"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return ghzResult{}, fmt.Errorf("ghz output: %w", err)
	}
	r := ghzResult{Count: doc.Count, RPS: doc.RPS}
	for status, n := range doc.Statuses {
		if status != "OK" {
			r.Errors += n
		}
	}
	found := 0
	for _, d := range doc.Distribution {
		switch d.Percentage {
		case 50:
			r.P50, found = d.Latency, found+1
		case 99:
			r.P99, found = d.Latency, found+1
		}
	}
	if found != 2 {
		return ghzResult{}, fmt.Errorf("ghz output: no p50 and p99 in latencyDistribution")
	}
	return r, nil
}
