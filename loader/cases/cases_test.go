package cases_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader/cases"
	"gatehouse.dev/gatehouse/pluginapi/plugintest"
)

func TestParse(t *testing.T) {
	body := "no"
	tests := []struct {
		name    string
		doc     string
		want    []cases.Case
		wantErr string
	}{
		{
			name: "good",
			doc:  `{"cases": [{"name": "a", "request": {"path": "/x", "headers": {"x-k": "v"}}, "want": {"decision": "deny", "status": 401, "body": "no"}}]}`,
			want: []cases.Case{{Name: "a", Request: cases.Request{Path: "/x", Headers: map[string]string{"x-k": "v"}},
				Want: plugintest.Want{Decision: "deny", Status: 401, Body: &body}}},
		},
		{name: "unknown field", doc: `{"cases": [{"name": "a", "want": {"decision": "allow"}, "expect": {}}]}`, wantErr: `json: unknown field "expect"`},
		{name: "no cases", doc: `{}`, wantErr: "no cases: write them under a top-level cases: key"},
		{
			name:    "every problem at once",
			doc:     `{"cases": [{"want": {"decision": "allow"}}, {"name": "b", "want": {"decision": "allow"}}, {"name": "b", "want": {"decision": "no"}}]}`,
			wantErr: "cases[0]: no name\ncases[2]: the name \"b\" is used twice\ncases[2] (b): want: decision \"no\": want \"allow\" or \"deny\"",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cases.Parse([]byte(tt.doc))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("Parse error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse (-want +got):\n%s", diff)
			}
		})
	}
}
