package table_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/internal/table"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{
			name:   "multi-line cells and short rows",
			header: []string{"UPSTREAM", "DETAILS"},
			rows:   [][]string{{"a.echo", "hosts:\n- 127.0.0.1:8090"}, {"b.web"}},
			want: `+----------+------------------+
| UPSTREAM | DETAILS          |
+----------+------------------+
| a.echo   | hosts:           |
|          | - 127.0.0.1:8090 |
| b.web    |                  |
+----------+------------------+
`,
		},
		{
			name:   "no rows",
			header: []string{"A"},
			want:   "+---+\n| A |\n+---+\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := table.Write(&b, tt.header, tt.rows); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
