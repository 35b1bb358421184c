package v1

import (
	"bytes"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// fastDocuments parses data as YAML documents when they are written in the plain
// subset resource files are written in: block mappings and sequences indented with
// spaces, one-line flow collections, plain and simple quoted scalars, comments, "---"
// between documents. It returns the same node trees as yaml.v3
// (TestFastDocumentsAreYAMLv3 and FuzzFastDocuments hold it to that, comments aside,
// which nothing reads), or nil for anything else, which yaml.v3 then parses (and
// reports, when it is wrong).
//
// Why: the control plane decodes every resource file at start, and a parser of this
// subset alone does less work per file than yaml.v3's general one.
func fastDocuments(data []byte) []*yaml.Node {
	docs, _, _ := parseFast(data)
	return docs
}

// parseFast is fastDocuments, and the parser whose nodes they are: its release hands
// their memory on to the next parse once nothing refers to them any more. deep is the
// line where a document nests past MaxDepth, whatever its style (0: none does); the
// parse stops there.
func parseFast(data []byte) (docs []*yaml.Node, p *fastParser, deep int) {
	for _, c := range data {
		// ASCII without tabs or CR: columns are bytes and indentation is spaces.
		if c != '\n' && (c < ' ' || c > '~') {
			return nil, nil, 0
		}
	}
	p = &fastParser{lines: splitLines(data)}
	for p.skipBlank(); p.i < len(p.lines); {
		doc := p.document()
		if deep = p.deepLine; deep > 0 {
			p.release()
			return nil, nil, deep
		}
		if doc == nil {
			p.release()
			return nil, nil, 0
		}
		docs = append(docs, doc)
	}
	return docs, p, 0
}

// document parses one document: an optional "---" line, then a block mapping at
// column 1 up to the end or the next "---" line.
func (p *fastParser) document() *yaml.Node {
	doc := &yaml.Node{Kind: yaml.DocumentNode}
	if isStart(p.lines[p.i]) {
		doc.Line, doc.Column = p.i+1, 1
		p.i++
		p.skipBlank()
	}
	if p.i == len(p.lines) || indent(p.lines[p.i]) != 0 || marker(p.lines[p.i]) {
		return nil // an empty document, or not a mapping
	}
	if doc.Line == 0 {
		doc.Line, doc.Column = p.i+1, 1
	}
	root := p.blockMapping(0)
	if root == nil || (p.i < len(p.lines) && !isStart(p.lines[p.i])) {
		return nil
	}
	doc.Content = []*yaml.Node{root}
	return doc
}

// maxKey bounds a key's length, colon included, well below the 1024 characters YAML
// allows an implicit key.
const maxKey = 512

type fastParser struct {
	lines [][]byte
	i     int // the line being parsed
	slab  []yaml.Node
	slabs []*[]yaml.Node // every slab of the parse, for release
	strs  *stringCache   // nil until the first scalar
	// depth is how many collections enclose the one being parsed; deepLine the line
	// where it passed MaxDepth (0: it has not).
	depth, deepLine int
}

// enter notes one more collection enclosing what follows, and says whether that is
// still within MaxDepth; every enter that returns true is followed by a leave.
func (p *fastParser) enter() bool {
	if p.depth >= MaxDepth {
		if p.deepLine == 0 {
			p.deepLine = p.i + 1
		}
		return false
	}
	p.depth++
	return true
}

func (p *fastParser) leave() { p.depth-- }

// node returns n allocated in a slab: a document's nodes are allocated a few at a
// time rather than one by one, and dropped together once it is decoded.
func (p *fastParser) node(n yaml.Node) *yaml.Node {
	if len(p.slab) == cap(p.slab) {
		s := slabs.Get().(*[]yaml.Node)
		p.slabs = append(p.slabs, s)
		p.slab = (*s)[:0]
	}
	p.slab = append(p.slab, n)
	return &p.slab[len(p.slab)-1]
}

// slabs are the node slabs of parses released, reused by the next parse: nodes are
// most of what decoding a file allocates.
var slabs = sync.Pool{New: func() any {
	s := make([]yaml.Node, 0, 32)
	return &s
}}

// release returns p's slabs for other parses: the caller no longer refers to any node
// p made (what was decoded from them holds copies of their strings, not the nodes).
func (p *fastParser) release() {
	for _, s := range p.slabs {
		clear((*s)[:cap(*s)]) // drop what the nodes pointed to
		slabs.Put(s)
	}
	p.slabs, p.slab = nil, nil
	if p.lines != nil {
		clear(p.lines) // they are the caller's bytes
		lines := p.lines[:0]
		lineSlices.Put(&lines)
		p.lines = nil
	}
	if p.strs != nil {
		stringCaches.Put(p.strs)
		p.strs = nil
	}
}

// lineSlices are the line slices of parses released, to reuse rather than allocate
// one for every file.
var lineSlices = sync.Pool{New: func() any { return new([][]byte) }}

// splitLines is bytes.Split(data, "\n") into a line slice from lineSlices.
func splitLines(data []byte) [][]byte {
	lines := (*lineSlices.Get().(*[][]byte))[:0]
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return append(lines, data)
		}
		lines = append(lines, data[:i:i])
		data = data[i+1:]
	}
}

// skipBlank moves past empty and comment-only lines.
func (p *fastParser) skipBlank() {
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if n := indent(l); n < len(l) && l[n] != '#' {
			return
		}
		p.i++
	}
}

// next is the indentation of the next line with content, or -1 at the end of the
// document ("---" or the end of data). Any other document marker ends the fast path
// (-2).
func (p *fastParser) next() int {
	p.skipBlank()
	switch {
	case p.i == len(p.lines) || isStart(p.lines[p.i]):
		return -1
	case marker(p.lines[p.i]):
		return -2
	}
	return indent(p.lines[p.i])
}

// marker says whether a line starts with a document marker; isStart whether it is
// exactly "---", the one the fast path takes (between documents).
func marker(l []byte) bool {
	return bytes.HasPrefix(l, []byte("---")) || bytes.HasPrefix(l, []byte("..."))
}

func isStart(l []byte) bool { return string(l) == "---" }

func indent(l []byte) int {
	n := 0
	for n < len(l) && l[n] == ' ' {
		n++
	}
	return n
}

// blockMapping parses the mapping whose first key is at column col of the current line
// (after "- " for a sequence item) and whose other keys are on lines indented by col.
func (p *fastParser) blockMapping(col int) *yaml.Node {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	m := p.node(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: p.i + 1, Column: col + 1})
	for {
		l := p.lines[p.i]
		k, end := p.plain(l, col, false)
		if k == nil || end == len(l) || l[end] != ':' || (end+1 < len(l) && l[end+1] != ' ') || end-col > maxKey {
			return nil // not a simple key
		}
		v := p.value(l, end+1, col)
		if v == nil {
			return nil
		}
		m.Content = append(m.Content, k, v)
		switch n := p.next(); {
		case n == -2 || n > col:
			return nil // a continuation line, or bad indentation
		case n < col:
			return m
		}
	}
}

// value parses a mapping value starting after the colon at pos on the current line;
// col is the mapping's column.
func (p *fastParser) value(l []byte, pos, col int) *yaml.Node {
	pos = skipSpaces(l, pos)
	if pos < len(l) && l[pos] != '#' {
		v, end := p.inline(l, pos, false)
		if v == nil || !restBlank(l, end) {
			return nil
		}
		p.i++
		return v
	}
	if pos < len(l) && l[pos-1] != ' ' {
		return nil // "key:#..."
	}
	// Nothing after the colon: the value is the block below.
	p.i++
	n := p.next()
	if n < 0 {
		return nil // null value
	}
	nl := p.lines[p.i]
	switch {
	case n >= col && item(nl, n):
		return p.blockSequence(n)
	case n > col:
		return p.blockMapping(n)
	}
	return nil
}

func item(l []byte, n int) bool { return n+1 < len(l) && l[n] == '-' && l[n+1] == ' ' }

// blockSequence parses the sequence whose items start with "- " at column col.
func (p *fastParser) blockSequence(col int) *yaml.Node {
	if !p.enter() {
		return nil
	}
	defer p.leave()
	s := p.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: p.i + 1, Column: col + 1})
	for {
		l := p.lines[p.i]
		pos := skipSpaces(l, col+2)
		if pos == len(l) || l[pos] == '#' || l[pos] == '-' {
			return nil // an item on the next lines, or a nested sequence
		}
		var v *yaml.Node
		if k, end := p.plain(l, pos, false); k != nil && end < len(l) && l[end] == ':' && (end+1 == len(l) || l[end+1] == ' ') {
			v = p.blockMapping(pos)
		} else {
			var end int
			if v, end = p.inline(l, pos, false); v != nil && !restBlank(l, end) {
				return nil
			}
			p.i++
		}
		if v == nil {
			return nil
		}
		s.Content = append(s.Content, v)
		switch n := p.next(); {
		case n == -2 || n > col:
			return nil
		case n < col || !item(p.lines[p.i], n):
			return s // the mapping holding the sequence goes on
		}
	}
}

// inline parses a scalar or a one-line flow collection at pos, returning it and where
// it ends. flow is true inside a flow collection.
func (p *fastParser) inline(l []byte, pos int, flow bool) (*yaml.Node, int) {
	if pos >= len(l) {
		return nil, 0
	}
	switch l[pos] {
	case '[', '{':
		return p.flow(l, pos)
	case '\'', '"':
		return p.quoted(l, pos)
	}
	return p.plain(l, pos, flow)
}

// flow parses [a, b] or {k: v, ...} closing on the same line.
func (p *fastParser) flow(l []byte, pos int) (*yaml.Node, int) {
	if !p.enter() {
		return nil, 0
	}
	defer p.leave()
	n := p.node(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: p.i + 1, Column: pos + 1})
	closing := byte(']')
	if l[pos] == '{' {
		n.Kind, n.Tag, closing = yaml.MappingNode, "!!map", '}'
	}
	pos = skipSpaces(l, pos+1)
	if pos < len(l) && l[pos] == closing {
		return n, pos + 1
	}
	for pos < len(l) {
		v, end := p.inline(l, pos, true)
		if v == nil {
			return nil, 0
		}
		pos = skipSpaces(l, end)
		if n.Kind == yaml.MappingNode {
			if pos+1 >= len(l) || l[pos] != ':' || l[pos+1] != ' ' || v.Kind != yaml.ScalarNode || v.Style != 0 || pos-v.Column+1 > maxKey {
				return nil, 0 // only "plain-key: value" entries
			}
			k := v
			if v, end = p.inline(l, skipSpaces(l, pos+1), true); v == nil {
				return nil, 0
			}
			n.Content = append(n.Content, k)
			pos = skipSpaces(l, end)
		}
		n.Content = append(n.Content, v)
		switch {
		case pos < len(l) && l[pos] == closing:
			return n, pos + 1
		case pos < len(l) && l[pos] == ',':
			pos = skipSpaces(l, pos+1)
			if pos < len(l) && (l[pos] == closing || l[pos] == ',') {
				return nil, 0 // a trailing or empty entry
			}
		default:
			return nil, 0
		}
	}
	return nil, 0
}
