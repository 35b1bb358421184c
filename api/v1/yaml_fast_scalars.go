package v1

import (
	"bytes"

	yaml "go.yaml.in/yaml/v3"
)

// The scalars of fastDocuments.

// quoted parses a one-line quoted scalar without escapes (other than ” in single
// quotes).
func (p *fastParser) quoted(l []byte, pos int) (*yaml.Node, int) {
	q := l[pos]
	n := p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Line: p.i + 1, Column: pos + 1})
	if q == '\'' {
		n.Style = yaml.SingleQuotedStyle
	}
	var v []byte
	for j := pos + 1; j < len(l); j++ {
		switch c := l[j]; {
		case c == '\\' && q == '"':
			return nil, 0
		case c == q && q == '\'' && j+1 < len(l) && l[j+1] == '\'':
			v = append(v, '\'')
			j++
		case c == q:
			n.Value = p.str(v)
			return n, j + 1
		default:
			v = append(v, c)
		}
	}
	return nil, 0 // continues on the next line
}

// plain parses a plain scalar at pos: where it ends is a colon followed by a space or
// the end of the line, " #", the end of the line, or in a flow collection also ",",
// "]" and "}". Characters that could start or mean something else send the document to
// yaml.v3.
func (p *fastParser) plain(l []byte, pos int, flow bool) (*yaml.Node, int) {
	if !plainStart(l, pos) {
		return nil, 0
	}
	end := pos
scan:
	for ; end < len(l); end++ {
		switch c := l[end]; c {
		case ':':
			if flow {
				if end+1 < len(l) && l[end+1] == ' ' {
					break scan
				}
				return nil, 0
			}
			if end+1 == len(l) || l[end+1] == ' ' {
				break scan
			}
		case ' ':
			if end+1 < len(l) && l[end+1] == '#' {
				break scan
			}
		case ',', ']', '}':
			if flow {
				break scan
			}
			return nil, 0
		case '#', '\'', '"', '`', '|', '>', '!', '&', '*', '?', '%', '@', '[', '{', '\\':
			return nil, 0
		}
	}
	v := p.str(bytes.TrimRight(l[pos:end], " "))
	tag := plainTag(v)
	if tag == "" {
		return nil, 0
	}
	return p.node(yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v, Line: p.i + 1, Column: pos + 1}), end
}

func plainStart(l []byte, pos int) bool {
	if pos >= len(l) {
		return false
	}
	switch c := l[pos]; {
	case isAlnum(c) || c == '/' || c == '_' || c == '~' || c == '$':
		return true
	case c == '-' || c == '+':
		return pos+1 < len(l) && isAlnum(l[pos+1])
	}
	return false
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// plainTag is the tag yaml.v3 resolves a plain scalar to, or "" when telling takes more
// than these cases (floats, timestamps, other bases), which yaml.v3 then decides.
func plainTag(v string) string {
	switch v {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	case "~", "null", "Null", "NULL":
		return "!!null"
	}
	c := v[0]
	if !('0' <= c && c <= '9') && c != '-' && c != '+' {
		return "!!str" // what yaml.v3 resolves by its first character alone, or by the list above
	}
	digits, dots, letter := 0, 0, false
	for i := range len(v) {
		switch c := v[i]; {
		case '0' <= c && c <= '9':
			digits++
		case c == '.':
			dots++
		case 'g' <= c && c <= 'z' && c != 'o' && c != 't' && c != 'x', 'G' <= c && c <= 'Z' && c != 'O' && c != 'T' && c != 'X':
			// No number or timestamp has these letters (durations such as 200ms do).
			letter = true
		}
	}
	num := v
	if c == '-' {
		num = v[1:]
	}
	switch {
	case letter && '0' <= c && c <= '9':
		return "!!str"
	case digits == len(num) && digits <= 18 && (num[0] != '0' || len(num) == 1):
		return "!!int"
	case digits+dots == len(v) && dots >= 2:
		return "!!str" // an IP address: neither a number nor a timestamp
	}
	return ""
}

func skipSpaces(l []byte, pos int) int {
	for pos < len(l) && l[pos] == ' ' {
		pos++
	}
	return pos
}

// restBlank says whether the line holds nothing but a comment after pos.
func restBlank(l []byte, pos int) bool {
	n := skipSpaces(l, pos)
	return n == len(l) || (l[n] == '#' && n > pos)
}
