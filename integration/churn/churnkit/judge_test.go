package churnkit

import (
	"testing"
	"time"
)

func TestJudge(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rec := func(sent, recv int, key, status int) Record {
		return Record{Route: 1, Req: Req{Key: key}, Sent: at(sent), Recv: at(recv), Status: status}
	}
	edit := []Change{{Route: 1, What: "edit", At: at(100), From: State{Secured, 1}, To: State{Secured, 2}}}
	for _, tc := range []struct {
		name    string
		changes []Change
		records []Record
		want    Verdict // counts only
		window  time.Duration
	}{
		{"before the edit, the old answer", edit, []Record{rec(10, 20, 1, 200), rec(10, 20, 2, 403)}, Verdict{}, 0},
		{"before the edit, the new answer is wrong", edit, []Record{rec(10, 20, 2, 200), rec(30, 40, 1, 403)},
			Verdict{WronglyAllowed: 1, WronglyDenied: 1}, 0},
		{"in flight while written, the new answer", edit, []Record{rec(90, 110, 2, 200)}, Verdict{}, 10 * time.Millisecond},
		{"inside the window, either answer", edit, []Record{rec(120, 125, 1, 200), rec(130, 140, 2, 200), rec(131, 135, 1, 200)},
			Verdict{}, 40 * time.Millisecond},
		{"after the first new answer, the old one is wrong", edit, []Record{rec(130, 140, 2, 200), rec(150, 155, 1, 200), rec(160, 165, 2, 403)},
			Verdict{WronglyAllowed: 1, WronglyDenied: 1}, 40 * time.Millisecond},
		{"an edit's window lasts until every replica gives the new answer", edit, []Record{
			rec(130, 140, 2, 200), rec(150, 155, 1, 200),
			{Route: 1, Req: Req{Key: 2}, Sent: at(120), Recv: at(125), Status: 200, Replica: 1, Poll: true},
			{Route: 1, Req: Req{Key: 2}, Sent: at(160), Recv: at(170), Status: 200, Replica: 2, Poll: true},
			rec(175, 180, 1, 200)},
			Verdict{WronglyAllowed: 1}, 70 * time.Millisecond},
		{"a replica back in the rotation with the new answer does not lengthen the window", edit, []Record{
			rec(130, 140, 2, 200),
			{Route: 1, Req: Req{Key: 2}, Sent: at(290), Recv: at(300), Status: 200, Replica: 2, Poll: true, Returned: true}},
			Verdict{}, 40 * time.Millisecond},
		{"one back with the old answer lengthens it until its new one", edit, []Record{
			rec(130, 140, 2, 200),
			{Route: 1, Req: Req{Key: 2}, Sent: at(290), Recv: at(300), Status: 403, Replica: 2, Poll: true, Returned: true},
			{Route: 1, Req: Req{Key: 2}, Sent: at(310), Recv: at(320), Status: 200, Replica: 2, Poll: true}},
			Verdict{}, 220 * time.Millisecond},
		{"an answer both states give does not end the window", edit, []Record{rec(110, 115, NoKey, 403), rec(120, 125, 1, 200), rec(130, 140, 1, 403)},
			Verdict{}, 40 * time.Millisecond},
		{"a new route: 404 until it serves, 5xx always wrong",
			[]Change{{Route: 1, What: "new", At: at(100), From: State{Absent, 0}, To: State{Secured, 1}}},
			[]Record{rec(110, 115, 1, 404), rec(120, 125, 1, 200), rec(130, 135, NoKey, 404), rec(140, 145, 1, 503)},
			Verdict{WrongStatuses: 1, Failed: 1}, 25 * time.Millisecond},
		{"a deletion: the old answer or 404, then 404 only",
			[]Change{{Route: 1, What: "delete", At: at(100), From: State{Secured, 1}, To: State{Absent, 0}}},
			[]Record{rec(110, 115, NoKey, 403), rec(120, 125, 1, 404), rec(130, 135, 1, 200)},
			Verdict{WronglyAllowed: 1}, 25 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			initial := func(int) State { return State{Secured, 1} }
			v := Judge(initial, tc.changes, tc.records)
			if v.Failed != tc.want.Failed || v.WronglyAllowed != tc.want.WronglyAllowed || v.WronglyDenied != tc.want.WronglyDenied || v.WrongStatuses != tc.want.WrongStatuses {
				t.Errorf("failed %d, wrongly allowed %d, wrongly denied %d, wrong statuses %d; want %d, %d, %d, %d (wrong: %+v)",
					v.Failed, v.WronglyAllowed, v.WronglyDenied, v.WrongStatuses,
					tc.want.Failed, tc.want.WronglyAllowed, tc.want.WronglyDenied, tc.want.WrongStatuses, v.Wrong)
			}
			var got time.Duration
			if len(v.Windows) == 1 && v.Windows[0].Closed {
				got = v.Windows[0].Took()
				// Waiting for every replica never ends a window sooner.
				if all := v.Windows[0].TookAll(); all < got {
					t.Errorf("window waiting for every replica %s, shorter than the window %s", all, got)
				}
			}
			if got != tc.window {
				t.Errorf("window %s, want %s", got, tc.window)
			}
		})
	}
}
