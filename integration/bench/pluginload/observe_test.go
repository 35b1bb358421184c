package pluginload

import (
	"os"
	"path/filepath"
	"testing"
)

func TestObserverLogLines(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		lines                     string
		wantChanged, wantAccepted bool
		wantRejected              string
	}{
		{
			name: "change accepted",
			lines: `{"level":"info","message":"plugin files appeared or changed","files":["loadplugin.so"]}
{"level":"info","config_id":"other.config","message":"auth config accepted"}
{"level":"info","config_id":"` + loadConfigID + `","steps":1,"message":"auth config accepted"}
`,
			wantChanged: true, wantAccepted: true,
		},
		{
			name: "another config accepted, ours rejected",
			lines: `{"level":"info","config_id":"other.config","message":"auth config accepted"}
{"level":"error","config_id":"` + loadConfigID + `","error":"loader: refused","message":"auth config rejected"}
`,
			wantRejected: "loader: refused",
		},
		{
			name:  "a line cut short is not read yet",
			lines: `{"level":"info","message":"plugin files appeared or changed"`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "gatehouse.log")
			if err := os.WriteFile(log, []byte(`{"message":"extauth serving"}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			o, err := newObserver(os.Getpid(), log)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(tc.lines)
			f.Close()
			o.readLog()
			got := o.seen
			o.log.Close()
			if (got.Detected != 0) != tc.wantChanged || (got.Accepted != 0) != tc.wantAccepted || got.rejected != tc.wantRejected {
				t.Errorf("seen changed %v, accepted %v, rejected %q; want %v, %v, %q",
					got.Detected != 0, got.Accepted != 0, got.rejected, tc.wantChanged, tc.wantAccepted, tc.wantRejected)
			}
		})
	}
}
