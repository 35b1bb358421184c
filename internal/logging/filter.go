package logging

import (
	"bufio"
	"encoding/json"
	"io"
)

// Filter copies log lines from r to w; with errorsOnly, only the JSON lines whose
// level is error, fatal or panic. A line may be up to 4 MiB long.
func Filter(w io.Writer, r io.Reader, errorsOnly bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4<<20)
	bw := bufio.NewWriter(w)
	for sc.Scan() {
		line := sc.Bytes()
		if errorsOnly {
			var l struct {
				Level string `json:"level"`
			}
			if json.Unmarshal(line, &l) != nil {
				continue
			}
			if l.Level != "error" && l.Level != "fatal" && l.Level != "panic" {
				continue
			}
		}
		bw.Write(line)
		bw.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return bw.Flush()
}
