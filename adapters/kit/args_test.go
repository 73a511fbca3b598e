package kit

import (
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

func TestNewUUID(t *testing.T) {
	a, b := NewUUID(), NewUUID()
	if !adapters.IsUUID(a) || a == b || a[14] != '4' {
		t.Fatalf("NewUUID = %q, %q: want two different version-4 UUIDs", a, b)
	}
}

func TestOptionValue(t *testing.T) {
	for _, tt := range []struct {
		words []string
		want  string
	}{
		{[]string{"--resume", "abc"}, "abc"},
		{[]string{"--resume=abc"}, "abc"},
		{[]string{"--resume"}, ""},
	} {
		if got := OptionValue(adapters.Arg{Words: tt.words, Option: "--resume"}); got != tt.want {
			t.Errorf("OptionValue(%q) = %q, want %q", tt.words, got, tt.want)
		}
	}
}
