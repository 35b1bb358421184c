// Package table prints the bordered tables of the operator CLI (`gatehouse get`):
// a header row, then one row per resource; a cell may hold several lines.
package table

import (
	"io"
	"strings"
	"unicode/utf8"
)

// Write prints header and rows to w:
//
//	+----------+--------+
//	| UPSTREAM | TYPE   |
//	+----------+--------+
//	| a.b      | Static |
//	+----------+--------+
//
// A cell's lines are separated by "\n". Rows shorter than header get empty cells.
func Write(w io.Writer, header []string, rows [][]string) error {
	widths := make([]int, len(header))
	measure := func(row []string) {
		for i := range header {
			if i < len(row) {
				for _, l := range strings.Split(row[i], "\n") {
					widths[i] = max(widths[i], utf8.RuneCountInString(l))
				}
			}
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	var b strings.Builder
	rule := func() {
		b.WriteByte('+')
		for _, wd := range widths {
			b.WriteString(strings.Repeat("-", wd+2) + "+")
		}
		b.WriteByte('\n')
	}
	line := func(row []string) {
		cells := make([][]string, len(header))
		height := 1
		for i := range header {
			if i < len(row) {
				cells[i] = strings.Split(row[i], "\n")
			}
			height = max(height, len(cells[i]))
		}
		for l := range height {
			b.WriteByte('|')
			for i, wd := range widths {
				s := ""
				if l < len(cells[i]) {
					s = cells[i][l]
				}
				b.WriteString(" " + s + strings.Repeat(" ", wd-utf8.RuneCountInString(s)) + " |")
			}
			b.WriteByte('\n')
		}
	}
	rule()
	line(header)
	rule()
	for _, r := range rows {
		line(r)
	}
	if len(rows) > 0 {
		rule()
	}
	_, err := io.WriteString(w, b.String())
	return err
}
