package pluginhost

import (
	"math/rand/v2"
	"testing"
)

// TestScanValue: eight bytes at a time finds what one at a time finds, for every
// length up to 40 with each byte value near a boundary at every position, and for
// random values.
func TestScanValue(t *testing.T) {
	check := func(v string) {
		t.Helper()
		gotAt, gotASCII := scanValue(v)
		wantAt, wantASCII := scanBytes(v, 0) // every byte, one at a time
		if gotAt != wantAt || gotASCII != wantASCII {
			t.Fatalf("scanValue(%q) = %d, %v; want %d, %v", v, gotAt, gotASCII, wantAt, wantASCII)
		}
	}
	edges := []byte{0x00, 0x08, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0xc3, 0xff}
	for n := range 41 {
		plain := make([]byte, n)
		for i := range plain {
			plain[i] = 'a' + byte(i%26)
		}
		check(string(plain))
		for pos := range n {
			for _, c := range edges {
				b := append([]byte(nil), plain...)
				b[pos] = c
				check(string(b))
				if pos+1 < n { // and a second one after it
					b[pos+1] = 0x7f
					check(string(b))
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(100))
		for i := range b {
			if r.IntN(20) == 0 {
				b[i] = edges[r.IntN(len(edges))]
			} else {
				b[i] = byte(0x20 + r.IntN(0x5f))
			}
		}
		check(string(b))
	}
}
