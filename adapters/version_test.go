package adapters

import "testing"

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2.1.197", "2.1.330", -1},
		{"2.1.330", "2.1.330", 0},
		{"2.10.0", "2.9.9", 1},
		{"0.169", "0.169.0", 0},
		{"1.0.0-beta.1", "1.0.0", 0},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	src := VersionSource{NewestProven: "2.1.330"}
	if UnprovenVersion("x", "2.1.330", src) != "" || UnprovenVersion("x", "", src) != "" {
		t.Error("a proven or unknown version reported as drift")
	}
	if UnprovenVersion("x", "2.1.331", src) == "" {
		t.Error("a newer version not reported")
	}
}
