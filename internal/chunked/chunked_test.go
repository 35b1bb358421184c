package chunked

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"
)

func ints(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestOfAndBuilderHoldTheElementsInOrder(t *testing.T) {
	for _, n := range []int{0, 1, Size - 1, Size, Size + 1, 3*Size + 7} {
		want := ints(n)
		var b Builder[int]
		for _, v := range want {
			b.Append(v)
		}
		for name, l := range map[string]List[int]{"Of": Of(slices.Clone(want)), "Builder": b.List()} {
			if l.Len() != n {
				t.Fatalf("%s(%d).Len() = %d", name, n, l.Len())
			}
			if got := l.Slice(); !slices.Equal(got, want) {
				t.Fatalf("%s(%d).Slice() = %v", name, n, got)
			}
			for i, v := range l.All() {
				if v != want[i] || l.At(i) != want[i] {
					t.Fatalf("%s(%d): at %d, All gives %d and At %d, want %d", name, n, i, v, l.At(i), want[i])
				}
			}
			if got := slices.Collect(l.Values()); !slices.Equal(got, want) && n > 0 {
				t.Fatalf("%s(%d).Values() = %v", name, n, got)
			}
			if !l.Same(l) {
				t.Fatalf("%s(%d) is not Same as itself", name, n)
			}
		}
	}
}

// TestEditLeavesTheListAndSharesWhatItDoesNotTouch replaces random elements and checks
// the copy against a plain slice edited the same way, the original against its
// elements before, the chunks shared, and Changes against the positions replaced.
func TestEditLeavesTheListAndSharesWhatItDoesNotTouch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + r.IntN(5*Size)
		before := ints(n)
		l := Of(slices.Clone(before))
		want := slices.Clone(before)
		ed := l.Edit()
		edits := r.IntN(5)
		for range edits {
			i := r.IntN(n)
			v := -1 - r.IntN(1000)
			ed.Set(i, v)
			want[i] = v
		}
		got := ed.List()
		if !slices.Equal(got.Slice(), want) {
			t.Fatalf("round %d: the copy holds %v, want %v", round, got.Slice(), want)
		}
		if !slices.Equal(l.Slice(), before) {
			t.Fatalf("round %d: the list edited changed", round)
		}
		var changed []int
		equalLen := Changes(l, got, func(i, old, new int) {
			if old != before[i] || new != want[i] {
				t.Fatalf("round %d: Changes at %d gives %d -> %d, want %d -> %d", round, i, old, new, before[i], want[i])
			}
			changed = append(changed, i)
		})
		var wantChanged []int
		for i := range want {
			if want[i] != before[i] {
				wantChanged = append(wantChanged, i)
			}
		}
		if !equalLen || !slices.Equal(changed, wantChanged) {
			t.Fatalf("round %d: Changes reports %v (lengths equal: %v), want %v", round, changed, equalLen, wantChanged)
		}
		// Every chunk without a changed position is shared; every other is a copy.
		for k := range l.chunks {
			touched := slices.ContainsFunc(wantChanged, func(i int) bool { return i/Size == k })
			if shared := sameChunk(l.chunks[k], got.chunks[k]); shared == touched {
				t.Fatalf("round %d: chunk %d shared %v, touched %v", round, k, shared, touched)
			}
		}
		touched := map[int]bool{}
		for _, i := range wantChanged {
			touched[i/Size] = true
		}
		if shared, chunks := Shared(l, got); shared != chunks-len(touched) || chunks != len(l.chunks) {
			t.Fatalf("round %d: Shared = %d of %d chunks, with %d of %d touched", round, shared, chunks, len(touched), len(l.chunks))
		}
		if got.Same(l) != (len(wantChanged) == 0) {
			t.Fatalf("round %d: Same = %v with %d positions changed", round, got.Same(l), len(wantChanged))
		}
	}
}

func TestChangesOfListsOfDifferentLengths(t *testing.T) {
	called := false
	if Changes(Of(ints(3)), Of(ints(4)), func(int, int, int) { called = true }) || called {
		t.Fatal("Changes compared lists of different lengths")
	}
	if !Of(ints(0)).Same(List[int]{}) {
		t.Fatal("an empty list is not Same as the zero List")
	}
}

func TestJSONIsAnArray(t *testing.T) {
	for _, n := range []int{0, 3, Size + 2} {
		b, err := json.Marshal(Of(ints(n)))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(append([]int{}, ints(n)...))
		if string(b) != string(want) {
			t.Fatalf("n=%d: %s, want %s", n, b, want)
		}
		var back List[int]
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(back.Slice(), ints(n)) && n > 0 {
			t.Fatalf("n=%d: read back %v", n, back.Slice())
		}
	}
}

func TestOutOfRangePanics(t *testing.T) {
	for name, f := range map[string]func(){
		"At":  func() { Of(ints(3)).At(3) },
		"Set": func() { Of(ints(3)).Edit().Set(-1, 0) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s out of range did not panic", name)
				}
			}()
			f()
		}()
	}
}
