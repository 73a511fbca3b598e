package procfs

import "testing"

func TestDarwinState(t *testing.T) {
	for stat, want := range map[int8]byte{1: 'R', 2: 'R', 3: 'S', 4: 'T', 5: 'Z', 0: '?', 9: '?'} {
		if got := darwinState(stat); got != want {
			t.Errorf("darwinState(%d) = %q, want %q", stat, got, want)
		}
	}
	if got := startMicros(1_700_000_000, 123456); got != 1_700_000_000_123_456 {
		t.Errorf("startMicros = %d", got)
	}
	if got := startMicros(-1, 0); got != 0 {
		t.Errorf("startMicros(before the epoch) = %d, want 0", got)
	}
}
