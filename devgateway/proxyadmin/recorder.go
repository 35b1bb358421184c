// Package proxyadmin is the dev gateway's admin server, shaped like Envoy's where an
// operator's tools touch it: /config_dump (what the gateway took over xDS, in Envoy's
// ConfigDump shape, secrets redacted), /logging, /stats, /listeners, /ready and its
// recent logs.
package proxyadmin

import (
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/anypb"
)

// entry is one resource the gateway holds, and the last update of it that failed.
type entry struct {
	res     *anypb.Any
	updated time.Time
	failed  *failure
}

type failure struct {
	res     *anypb.Any
	at      time.Time
	details string
}

// typeStats counts the updates of one type, as Envoy's update_* stats do.
type typeStats struct {
	attempt, success, rejected int
}

// Recorder keeps what the gateway took of each xDS type, for /config_dump and /stats.
type Recorder struct {
	log       zerolog.Logger
	mu        sync.Mutex
	resources map[string]map[string]*entry // type URL → name
	stats     map[string]*typeStats
}

// NewRecorder returns an empty Recorder; it logs each update at debug level on log.
func NewRecorder(log zerolog.Logger) *Recorder {
	return &Recorder{log: log, resources: map[string]map[string]*entry{}, stats: map[string]*typeStats{}}
}

// Wrap returns a handler for the xDS client that calls next and records the outcome: a
// resource next refuses (its problems name it, "<kind> <name>: …") keeps its previous
// version, with the failure beside it, as the gateway itself does.
func (r *Recorder) Wrap(next func(typeURL string, res map[string]*anypb.Any) error) func(string, map[string]*anypb.Any) error {
	return func(typeURL string, res map[string]*anypb.Any) error {
		err := next(typeURL, res)
		r.record(typeURL, res, err)
		r.log.Debug().Str("type", typeURL).Int("resources", len(res)).Bool("rejected", err != nil).Msg("xds update")
		return err
	}
}

func (r *Recorder) record(typeURL string, res map[string]*anypb.Any, err error) {
	now := time.Now()
	var lines []string
	if err != nil {
		lines = strings.Split(err.Error(), "\n")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.stats[typeURL]
	if st == nil {
		st = &typeStats{}
		r.stats[typeURL] = st
	}
	st.attempt++
	if err == nil {
		st.success++
	} else {
		st.rejected++
	}
	prev := r.resources[typeURL]
	next := make(map[string]*entry, len(res))
	for name, a := range res {
		why := refusal(lines, name)
		old := prev[name]
		switch {
		case why == "" && old != nil && old.failed == nil && proto2Equal(old.res, a):
			next[name] = old
		case why == "":
			next[name] = &entry{res: a, updated: now}
		default:
			e := &entry{failed: &failure{res: a, at: now, details: why}}
			if old != nil {
				e.res, e.updated = old.res, old.updated
			}
			next[name] = e
		}
	}
	r.resources[typeURL] = next
}

// refusal is the lines of an error that name resource name ("<kind> <name>: …").
func refusal(lines []string, name string) string {
	var out []string
	for _, l := range lines {
		if i := strings.Index(l, " "+name+": "); i >= 0 && !strings.Contains(l[:i], ": ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func proto2Equal(a, b *anypb.Any) bool {
	return a.GetTypeUrl() == b.GetTypeUrl() && string(a.GetValue()) == string(b.GetValue())
}
