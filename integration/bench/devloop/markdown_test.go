package devloop

import (
	"flag"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func TestMarkdownGolden(t *testing.T) {
	ms := time.Millisecond
	var saves []save
	for i := 1; i <= 4; i++ {
		d := time.Duration(i)
		saves = append(saves, save{Building: 200*ms + d*ms, Built: 700*ms + d*9*ms, Opened: 760*ms + d*9*ms, Serving: 780*ms + d*11*ms,
			GoBuild: 500*ms + d*5*ms, Check: 90*ms + d*ms})
	}
	var b strings.Builder
	writeModule(&b, module{name: "copy of plugins/required_header/required_header.go", file: "required_header.go"}, saves)
	benchkit.Golden(t, "testdata/devloop.md", b.String(), *update)
}
