package pi_test

import (
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
)

// TestResolvePi: the ways Pi is started resolve to the pi adapter, and a
// launch placement lands at Pi's first own argument.
func TestResolvePi(t *testing.T) {
	reg := builtin.Default()
	for _, argv := range [][]string{
		{"pi", "-p", "hi"},
		{"/p/node_modules/.bin/pi", "-p", "hi"},
		{"npx", "@mariozechner/pi-coding-agent", "-p", "hi"},
		{"npx", "-y", "@mariozechner/pi-coding-agent@0.73.1", "-p", "hi"},
		{"node", "/p/node_modules/@mariozechner/pi-coding-agent/dist/cli.js", "-p", "hi"},
		{"env", "PI_OFFLINE=1", "pi", "-p", "hi"},
	} {
		ad := reg.Resolve(argv)
		if ad.ID != "pi" {
			t.Errorf("%q resolves to %s", argv, ad.ID)
			continue
		}
		out, _, ok := ad.PlaceAtLaunch(argv, "T")
		want := slices.Insert(slices.Clone(argv), len(argv)-2, "--append-system-prompt", "T")
		if !ok || !slices.Equal(out, want) {
			t.Errorf("PlaceAtLaunch(%q) = %q %v, want %q", argv, out, ok, want)
		}
	}
}
