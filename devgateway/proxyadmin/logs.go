package proxyadmin

import (
	"sync"
)

// maxLogLines bounds the lines LogBuffer keeps.
const maxLogLines = 2000

// LogBuffer keeps the gateway's recent log lines for GET /logs and hands new ones to
// followers. Put it beside the process's stderr with io.MultiWriter.
type LogBuffer struct {
	mu        sync.Mutex
	lines     [][]byte
	partial   []byte
	followers map[chan []byte]struct{}
}

// NewLogBuffer returns an empty LogBuffer.
func NewLogBuffer() *LogBuffer { return &LogBuffer{followers: map[chan []byte]struct{}{}} }

// Write takes log output; zerolog writes one line per call.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	for {
		i := indexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		line := append([]byte(nil), b.partial[:i+1]...)
		b.partial = b.partial[i+1:]
		b.lines = append(b.lines, line)
		if len(b.lines) > maxLogLines {
			b.lines = b.lines[len(b.lines)-maxLogLines:]
		}
		for ch := range b.followers {
			select {
			case ch <- line:
			default: // a slow follower misses lines rather than stalling the gateway
			}
		}
	}
	return len(p), nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// Lines returns the kept lines and, when follow is true, a channel of the lines written
// after them and a function to stop following.
func (b *LogBuffer) Lines(follow bool) ([][]byte, <-chan []byte, func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([][]byte(nil), b.lines...)
	if !follow {
		return out, nil, func() {}
	}
	ch := make(chan []byte, 256)
	b.followers[ch] = struct{}{}
	return out, ch, func() {
		b.mu.Lock()
		delete(b.followers, ch)
		b.mu.Unlock()
	}
}
