package checkload

import "time"

// Fixture is a fixed set of runs for the golden tests of the sections that load
// servers: rounds rounds of each of loads on base and server, every figure a
// function of its position so that medians and ratios differ.
func Fixture(loads []string, base, server string, rounds int) []Measurement {
	var out []Measurement
	for round := 1; round <= rounds; round++ {
		for li, load := range loads {
			for si, srv := range []string{base, server} {
				k := time.Duration(1 + round + 3*li + 5*si)
				out = append(out, Measurement{Round: round, Server: srv, Path: load, Count: int64(1000 * k), RPS: 9000 / float64(k),
					P50: k * 100 * time.Microsecond, P99: k * 310 * time.Microsecond, Errors: int64(round % 2 * si),
					CPUPerCheck: k * 7 * time.Microsecond, Others: float64(k) / 100})
			}
		}
	}
	return out
}
