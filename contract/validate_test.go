package contract

import (
	"strings"
	"testing"
)

func TestPrefixedHex(t *testing.T) {
	hex64 := strings.Repeat("0a9f", 16)
	for s, want := range map[string]bool{
		"sha256:" + hex64:                          true,
		"sha256:" + strings.ToUpper(hex64):         false,
		"sha256:" + hex64[:63]:                     false,
		"sha256:" + hex64 + "0":                    false,
		"sha256:" + hex64[:63] + "g":               false,
		"sha1:" + hex64:                            false,
		" sha256:" + hex64:                         false,
		"sha256:" + hex64[:32] + "\n" + hex64[33:]: false,
	} {
		if got := prefixedHex(s, "sha256:", 64); got != want {
			t.Errorf("prefixedHex(%q) = %v, want %v", s, got, want)
		}
	}
	if !prefixedHex("evt_0123456789abcdef", "evt_", 16) || prefixedHex("trc_0123456789abcdef", "evt_", 16) {
		t.Error("prefixedHex does not tell evt_ ids from trc_ ids")
	}
}
