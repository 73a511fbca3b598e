package launcher

import (
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
)

// TestLaunchRecipeOneOrder: the first launch and a relaunch get their
// command line from the same recipe, in the same order — after the
// placement, the hook bridge's arguments (once), the session pin, then
// the placement moved into a private file.
func TestLaunchRecipeOneOrder(t *testing.T) {
	ad := adapters.AdapterOf(claude.Harness{})
	files := &placementFiles{dir: t.TempDir()}
	defer files.remove()
	r := launchRecipe{ad: ad, bridge: []string{"--settings", "/s/bridge.json"}, pin: true, files: files, env: []string{"HOME=" + t.TempDir()}}
	placed, _, ok := ad.PlaceAtLaunch([]string{"claude", "-p", "hi"}, `{"payloads":[]}`)
	if !ok {
		t.Fatal("not placed")
	}
	first, pinned, err := r.argv(placed)
	if err != nil {
		t.Fatal(err)
	}
	if pinned == "" || !slices.Contains(first, pinned) {
		t.Errorf("%q: not pinned (%q)", first, pinned)
	}
	if strings.Contains(strings.Join(first, " "), "payloads") {
		t.Errorf("%q: the placement is still on the command line", first)
	}
	if n := strings.Count(strings.Join(first, " "), "/s/bridge.json"); n != 1 {
		t.Errorf("%q: bridge arguments %d times", first, n)
	}
	// A relaunch whose command line already has the bridge (the renewal
	// kept the user's) does not get it twice.
	again, _, err := r.argv(first)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(strings.Join(again, " "), "/s/bridge.json"); n != 1 {
		t.Errorf("%q: bridge arguments %d times after a relaunch", again, n)
	}
}
