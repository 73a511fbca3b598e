package pi

import (
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

const envelope = `{"payloads":[{"body":"x"}]}`

func TestPlaceAtLaunch(t *testing.T) {
	tests := []struct {
		argv []string
		want []string
		ok   bool
	}{
		{[]string{"pi"}, []string{"pi", "--append-system-prompt", "T"}, true},
		{[]string{"pi", "-p", "hi"}, []string{"pi", "--append-system-prompt", "T", "-p", "hi"}, true},
		{[]string{"pi", "--append-system-prompt", "mine", "hi"}, []string{"pi", "--append-system-prompt", "T", "--append-system-prompt", "mine", "hi"}, true},
		{[]string{"pi", "--session", "abc"}, []string{"pi", "--append-system-prompt", "T", "--session", "abc"}, true},
		{[]string{"pi", "install", "npm:x"}, nil, false},
		{[]string{"pi", "--help"}, nil, false},
		{[]string{"pi", "--list-models", "mock"}, nil, false},
		{[]string{"pi", "--export", "s.jsonl"}, nil, false},
	}
	for _, tt := range tests {
		orig := slices.Clone(tt.argv)
		got, class, ok := Harness{}.PlaceAtLaunch(tt.argv, 1, "T")
		if !slices.Equal(tt.argv, orig) {
			t.Errorf("%v modified", orig)
		}
		if ok != tt.ok || (ok && (!slices.Equal(got, tt.want) || class != contract.ManifestPreSession)) || (!ok && !slices.Equal(got, orig)) {
			t.Errorf("PlaceAtLaunch(%q) = %q %s %v, want %q %v", orig, got, class, ok, tt.want, tt.ok)
		}
	}
}

func TestExternalizePlacement(t *testing.T) {
	var wrote []string
	write := func(text string) (string, error) {
		wrote = append(wrote, text)
		return "/state/p.txt", nil
	}
	argv := []string{"pi", "--append-system-prompt", "mine", "--append-system-prompt", envelope, "-p", "hi"}
	orig := slices.Clone(argv)
	got, err := Harness{}.ExternalizePlacement(argv, 1, adapters.PlacementFiles{Write: write})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pi", "--append-system-prompt", "mine", "--append-system-prompt", "/state/p.txt", "-p", "hi"}
	if !slices.Equal(got, want) || !slices.Equal(argv, orig) || len(wrote) != 1 || wrote[0] != envelope {
		t.Errorf("got %q (argv %q), wrote %q", got, argv, wrote)
	}
	// A prompt that looks like an envelope is not a placement.
	argv = []string{"pi", "-p", envelope}
	if got, _ := (Harness{}).ExternalizePlacement(argv, 1, adapters.PlacementFiles{Write: write}); !slices.Equal(got, argv) || len(wrote) != 1 {
		t.Errorf("prompt externalized: %q", got)
	}
}

func TestRelaunchArgv(t *testing.T) {
	tests := []struct {
		argv   []string
		resume bool
		want   []string
	}{
		{[]string{"pi"}, true, []string{"pi", "--session", "ID"}},
		{[]string{"pi"}, false, []string{"pi"}},
		{[]string{"pi", "--model", "mock/m", "first prompt"}, true, []string{"pi", "--session", "ID", "--model", "mock/m"}},
		{[]string{"pi", "--model", "mock/m", "first prompt"}, false, []string{"pi", "--model", "mock/m", "first prompt"}},
		{[]string{"pi", "-c", "--session-dir", "/d", "@f.md", "go"}, true, []string{"pi", "--session", "ID"}},
		{[]string{"pi", "--session", "old", "-e", "x.ts"}, false, []string{"pi", "-e", "x.ts"}},
		{[]string{"pi", "-p", "hi", "--fork", "old"}, true, []string{"pi", "--session", "ID", "-p", "hi"}},
		{[]string{"pi", "--mode", "json", "hi"}, true, []string{"pi", "--session", "ID", "--mode", "json", "hi"}},
		{[]string{"pi", "--plan", "x", "--no-session"}, false, []string{"pi", "--plan", "x"}},
	}
	for _, tt := range tests {
		orig := slices.Clone(tt.argv)
		got, ok := Harness{}.RelaunchArgv(tt.argv, 1, "ID", tt.resume)
		if !ok || !slices.Equal(got, tt.want) || !slices.Equal(tt.argv, orig) {
			t.Errorf("RelaunchArgv(%q, resume=%v) = %q %v, want %q", orig, tt.resume, got, ok, tt.want)
		}
	}
	for _, argv := range [][]string{{"pi", "list"}, {"pi", "--version"}} {
		if _, ok := (Harness{}).RelaunchArgv(argv, 1, "ID", true); ok {
			t.Errorf("RelaunchArgv(%q) ok", argv)
		}
	}
	if _, ok := (Harness{}).RelaunchArgv([]string{"pi"}, 1, "", true); ok {
		t.Error("resume without an id: ok")
	}
}

func TestParseArgs(t *testing.T) {
	got := parseArgs([]string{"-p", "@a.md", "--thinking", "high", "--plan", "--x", "v", "-e", "e.ts", "--print", "--y=1", "msg"})
	var words []string
	for _, a := range got {
		words = append(words, strings.Join(a.words, " "))
	}
	want := []string{"-p", "@a.md", "--thinking high", "--plan", "--x v", "-e e.ts", "--print", "--y=1", "msg"}
	if !slices.Equal(words, want) {
		t.Errorf("got %q, want %q", words, want)
	}
}
