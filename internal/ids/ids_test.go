package ids

import (
	"bytes"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestNewFormat(t *testing.T) {
	for _, prefix := range []string{PrefixSession, PrefixReceipt, PrefixInvocation, PrefixEvent} {
		t.Run(prefix, func(t *testing.T) {
			id := NewULIDSource(nil, nil).New(prefix)
			p, s, ok := Split(id)
			if !ok || p != prefix {
				t.Fatalf("Split(%q) = %q, %q, %v", id, p, s, ok)
			}
			if len(s) != 26 {
				t.Fatalf("suffix %q has %d chars, want 26", s, len(s))
			}
			if _, ok := Time(id); !ok {
				t.Fatalf("Time(%q) not ok", id)
			}
		})
	}
}

func TestMonotonicWithinMillisecond(t *testing.T) {
	fixed := time.Unix(1778100000, 0)
	src := NewULIDSource(func() time.Time { return fixed }, bytes.NewReader(bytes.Repeat([]byte{7}, 1<<16)))
	prev := ""
	for i := 0; i < 1000; i++ {
		id := src.New("lfr")
		if id <= prev {
			t.Fatalf("id %d %q not greater than %q", i, id, prev)
		}
		prev = id
	}
	got, ok := Time(prev)
	if !ok || !got.Equal(fixed) {
		t.Fatalf("Time = %v, %v; want %v", got, ok, fixed)
	}
}

func TestConcurrentUnique(t *testing.T) {
	const workers, each = 8, 500
	var mu sync.Mutex
	seen := make(map[string]bool, workers*each)
	src := NewULIDSource(nil, nil)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]string, 0, each)
			for i := 0; i < each; i++ {
				local = append(local, src.New("evt"))
			}
			mu.Lock()
			defer mu.Unlock()
			for _, id := range local {
				if seen[id] {
					t.Errorf("duplicate id %q", id)
				}
				seen[id] = true
			}
		}()
	}
	wg.Wait()
	if len(seen) != workers*each {
		t.Fatalf("got %d unique ids, want %d", len(seen), workers*each)
	}
}

func TestSequential(t *testing.T) {
	var s Sequential
	var src Source = &s
	got := []string{src.New("ses"), src.New("lfr"), src.New("ses")}
	want := []string{
		"ses_00000000000000000000000001",
		"lfr_00000000000000000000000002",
		"ses_00000000000000000000000003",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("id %d = %q, want %q", i, got[i], want[i])
		}
	}
	if !sort.StringsAreSorted([]string{got[0], got[2]}) {
		t.Errorf("sequential ids not sorted")
	}
}

func TestSplitAndTime(t *testing.T) {
	tests := []struct {
		id     string
		ok     bool
		timeOK bool
	}{
		{"ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F", true, true},
		{"noprefix", false, false},
		{"_abc", false, false},
		{"abc_", false, false},
		{"ses_not-a-ulid", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, _, ok := Split(tt.id)
			if ok != tt.ok {
				t.Errorf("Split ok = %v, want %v", ok, tt.ok)
			}
			_, tok := Time(tt.id)
			if tok != tt.timeOK {
				t.Errorf("Time ok = %v, want %v", tok, tt.timeOK)
			}
		})
	}
}

func TestSourceFunc(t *testing.T) {
	var src Source = SourceFunc(func(p string) string { return strings.ToUpper(p) + "_x" })
	if got := src.New("inv"); got != "INV_x" {
		t.Fatalf("got %q", got)
	}
}
