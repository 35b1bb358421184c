package oidc

import (
	"strconv"
	"testing"
)

func TestSessionMemoBounded(t *testing.T) {
	m := newSessionMemo(memoEntries)
	for i := 0; i < memoEntries+100; i++ {
		m.put(strconv.Itoa(i), &memoEntry{key: "k"})
	}
	if got := m.len(); got != memoEntries {
		t.Errorf("memo holds %d entries after %d puts; want the bound %d", got, memoEntries+100, memoEntries)
	}
	last := strconv.Itoa(memoEntries + 99)
	if m.get(last) == nil {
		t.Error("the entry put last was evicted")
	}
	m.drop(last)
	if m.get(last) != nil {
		t.Error("drop kept the entry")
	}
}
