package v1

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	yamlv2 "go.yaml.in/yaml/v2"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the problems the parser (not the scanner) of yaml.v2 and v3
// reports. For these both give the line counted from 0, one less than an editor shows.
var parserProblems = []string{"did not find expected", "found duplicate %", "found incompatible YAML document", "found undefined tag handle"}

// editorLine splits a yaml "line N: problem" error into the problem and the line an
// editor shows for N.
func editorLine(err error) (line int, problem string) {
	m := yamlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return 1, strings.TrimPrefix(err.Error(), "yaml: ") // the first line (0 from 0) is left out
	}
	line, _ = strconv.Atoi(m[1])
	for _, p := range parserProblems {
		if strings.HasPrefix(m[2], p) {
			return line + 1, m[2]
		}
	}
	return line, m[2]
}

// syntaxError turns yaml.v3's error for document doc of source into
// "source:LINE: document doc: yaml: problem". yaml.v3 gives the line where the
// enclosing mapping or sequence starts when there is one, which may be far above the
// problem; yaml.v2 gives the problem's own line. Both are said when they differ.
func syntaxError(data []byte, source string, doc int, err error) error {
	line, problem := editorLine(err)
	if at, ok := problemLine(data, problem); ok && at != line {
		return fmt.Errorf("%s:%d: document %d: yaml: %s (in what starts on line %d)", source, at, doc, problem, line)
	}
	return fmt.Errorf("%s:%d: document %d: yaml: %s", source, line, doc, problem)
}

// problemLine is the line yaml.v2 reports for the same problem, if it finds it.
func problemLine(data []byte, problem string) (int, bool) {
	dec := yamlv2.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return 0, false
		}
		if err != nil {
			line, p := editorLine(err)
			return line, p == problem
		}
	}
}
