package cli

import (
	"slices"
	"testing"
)

// procwrap's words end at the harness's command line, which is passed on
// whole, even where it has options of the same names.
func TestParseProcwrap(t *testing.T) {
	o, err := parseProcwrap([]string{"--adapter", "h", "--chain", `["/corp/own","-x"]`, "/bin/h", "--adapter", "y", "--", "z"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Adapter != "h" || !slices.Equal(o.Chain, []string{"/corp/own", "-x"}) || !slices.Equal(o.Argv, []string{"/bin/h", "--adapter", "y", "--", "z"}) {
		t.Fatalf("got %+v", o)
	}
	o, err = parseProcwrap([]string{"--adapter", "h", "--observe", "42", "--session", "s", "--launched-by", "a,b", "--since", "1796296660439"})
	if err != nil || o.check() != nil || o.Observe != 42 || o.Session != "s" || !slices.Equal(o.LaunchedBy, []string{"a", "b"}) || o.Since.UnixMilli() != 1796296660439 {
		t.Fatalf("observer words: %+v, %v", o, err)
	}
	for _, bad := range [][]string{
		{"--adapter", "h", "--chain", `["relative"]`, "/bin/h"},
		{"--adapter", "h", "--chain", "not json", "/bin/h"},
		{"--adapter", "h", "--observe", "x"},
		{"--adapter", "h", "--observe", "42", "--since", "yesterday"},
		{"--adapter"},
	} {
		if _, err := parseProcwrap(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
	if o, _ := parseProcwrap([]string{"/bin/h"}); o.check() == nil {
		t.Error("no --adapter: accepted")
	}
	if o, _ := parseProcwrap([]string{"--adapter", "h"}); o.check() == nil {
		t.Error("no command: accepted")
	}
}

// A lifeloop prefix already set (another build's) is replaced, keeping
// the wrapper it chains.
func TestProcessWrapperPrefixReplacesAnotherLifeloop(t *testing.T) {
	p, err := ProcessWrapperPrefix("h", []string{"/old/lifeloop", "procwrap", "--adapter", "h", "--chain", `["/corp/own"]`})
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 6 || p[1] != "procwrap" || p[5] != `["/corp/own"]` {
		t.Fatalf("got %q", p)
	}
}
