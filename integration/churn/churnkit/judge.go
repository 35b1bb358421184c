package churnkit

import (
	"net/http"
	"slices"
	"sort"
	"time"
)

// Change is one write (or removal) of a route's files.
type Change struct {
	Route    int
	What     string    // "new", "edit" or "delete"
	At       time.Time // taken just before the first file was written or removed
	From, To State
}

// Record is one request sent to the gateway and what came back.
type Record struct {
	Route      int
	Req        Req
	Sent, Recv time.Time
	Status     int    // 0 when no response came
	Err        string // why no response came
	Poll       bool   // sent by a change's poller rather than the steady load
	// Replica is 0 for a request through the gateway, k+1 for a Check sent straight to
	// extauth replica k: such records are not judged, they only find a window's end.
	Replica int
	// Returned marks a Check sent straight to a replica that was out of the gateway's
	// rotation (exited, or started and not yet sent Checks by the gateway) since the
	// change was written: its first answer since it came back.
	Returned bool
}

// Window is a change's propagation: from its files written to the first answer that
// only its new state gives (End) through the gateway, or for an AuthConfig edit, which
// each extauth replica takes on by itself, to the last replica's first such answer
// when that is later. A replica that was out of the gateway's rotation meanwhile
// answered no request: if its first answer once back is the new one, it does not
// lengthen the window (EndAll is the end that waits for it too). A change superseded
// before its end is seen ends with its successor's window; one never seen to propagate
// is not Closed.
type Window struct {
	Change
	End, EndAll time.Time
	Closed      bool
	Superseded  bool
}

// Took is the window's length.
func (w Window) Took() time.Duration { return w.End.Sub(w.At) }

// TookAll is the window's length if every replica is waited for, out of the gateway's
// rotation or not.
func (w Window) TookAll() time.Duration { return w.EndAll.Sub(w.At) }

// Wrong is a response that no state in force while it was in flight prescribes.
type Wrong struct {
	Record
	Class      string // "5xx", "wrongly allowed", "wrongly denied" or "wrong status"
	Acceptable []int  // the answers that would have been right
}

// Verdict is the judgement of a run.
type Verdict struct {
	Requests, Polls                                      int
	Failed, WronglyAllowed, WronglyDenied, WrongStatuses int
	Wrong                                                []Wrong // all of them, in order of sending
	Windows                                              []Window
}

// Judge judges every record sent through the gateway. A response is right when it is
// the answer of a state in force at some instant while the request was in flight (from
// Sent to Recv): the state its route's last change before that instant set, or, inside
// that change's window, the state before it. initial is each route's state before any
// change.
func Judge(initial func(route int) State, changes []Change, records []Record) Verdict {
	byRoute := map[int][]Change{}
	for _, c := range changes {
		byRoute[c.Route] = append(byRoute[c.Route], c)
	}
	recs := map[int][]int{}
	for i, r := range records {
		recs[r.Route] = append(recs[r.Route], i)
	}
	windows := map[int][]Window{}
	var v Verdict
	for route, cs := range byRoute {
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].At.Before(cs[j].At) })
		ws := windows_(cs, records, recs[route])
		windows[route] = ws
		v.Windows = append(v.Windows, ws...)
	}
	sort.Slice(v.Windows, func(i, j int) bool { return v.Windows[i].At.Before(v.Windows[j].At) })
	for _, r := range records {
		if r.Replica != 0 {
			continue
		}
		if r.Poll {
			v.Polls++
		} else {
			v.Requests++
		}
		ok := acceptable(initial(r.Route), windows[r.Route], r)
		if r.Err == "" && r.Status < 500 && slices.Contains(ok, r.Status) {
			continue
		}
		w := Wrong{Record: r, Acceptable: ok}
		switch {
		case r.Err != "" || r.Status >= 500:
			w.Class = "5xx"
			v.Failed++
		case r.Status == http.StatusOK:
			w.Class = "wrongly allowed"
			v.WronglyAllowed++
		case slices.Contains(ok, http.StatusOK):
			w.Class = "wrongly denied"
			v.WronglyDenied++
		default:
			w.Class = "wrong status"
			v.WrongStatuses++
		}
		v.Wrong = append(v.Wrong, w)
	}
	sort.Slice(v.Wrong, func(i, j int) bool { return v.Wrong[i].Sent.Before(v.Wrong[j].Sent) })
	return v
}

// windows_ finds the end of each of one route's changes (in order) from its records.
func windows_(cs []Change, records []Record, idx []int) []Window {
	ws := make([]Window, len(cs))
	for i, c := range cs {
		ws[i] = Window{Change: c}
		var next time.Time
		if i+1 < len(cs) {
			next = cs[i+1].At
		}
		first := map[int]time.Time{} // by Replica: the first answer of the new state
		earliest := map[int]Record{} // by Replica: the first answer
		for _, j := range idx {
			r := records[j]
			if r.Err != "" || r.Recv.Before(c.At) || !next.IsZero() && !r.Sent.Before(next) {
				continue
			}
			if e, ok := earliest[r.Replica]; !ok || r.Recv.Before(e.Recv) {
				earliest[r.Replica] = r
			}
			if f, ok := first[r.Replica]; r.Status == c.To.Answer(r.Req) && r.Status != c.From.Answer(r.Req) && (!ok || r.Recv.Before(f)) {
				first[r.Replica] = r.Recv
			}
		}
		if end, ok := first[0]; ok {
			ws[i].End, ws[i].EndAll, ws[i].Closed = end, end, true
			for k, f := range first {
				if k == 0 || c.From.Kind != c.To.Kind {
					continue
				}
				if f.After(ws[i].EndAll) {
					ws[i].EndAll = f
				}
				// Back in the rotation with the new answer: no request had the old one.
				if e := earliest[k]; e.Returned && e.Recv.Equal(f) {
					continue
				}
				if f.After(ws[i].End) {
					ws[i].End = f
				}
			}
		}
	}
	for i := len(ws) - 1; i >= 0; i-- {
		if !ws[i].Closed && i+1 < len(ws) {
			ws[i].End, ws[i].EndAll, ws[i].Closed, ws[i].Superseded = ws[i+1].End, ws[i+1].EndAll, ws[i+1].Closed, true
		}
	}
	return ws
}

// acceptable is every answer a state in force while r was in flight prescribes.
func acceptable(initial State, ws []Window, r Record) []int {
	in := initial
	var out []int
	add := func(s State) {
		if a := s.Answer(r.Req); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	recv := r.Recv
	if recv.IsZero() {
		recv = r.Sent
	}
	for _, w := range ws {
		if !w.At.After(r.Sent) {
			in = w.To
		} else if !w.At.After(recv) {
			add(w.To)
		}
		if !w.At.After(recv) && (!w.Closed || w.End.After(r.Sent)) {
			add(w.From)
		}
	}
	add(in)
	return out
}
