package kit

import (
	"encoding/json"
	"testing"

	"github.com/lifeloop/lifeloop/hooks"
)

// TestAddSettingsHooks: lifeloop's hooks come after the file's own for
// the same event, everything else is kept; a file that is not settings
// is refused.
func TestAddSettingsHooks(t *testing.T) {
	spec := &hooks.Spec{Adapter: "x", Hooks: []hooks.Hook{{Name: "Stop"}, {Name: "Start"}}}
	base := `{"a": 1, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}], "Other": []}}`
	b, err := AddSettingsHooks([]byte(base), spec, []string{"/ll"})
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		A     int `json:"a"`
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	stop := s.Hooks["Stop"]
	if s.A != 1 || len(stop) != 2 || stop[0].Hooks[0].Command != "mine" || stop[1].Hooks[0].Command != hooks.Command([]string{"/ll"}, "x", "Stop") {
		t.Errorf("merged:\n%s", b)
	}
	if _, ok := s.Hooks["Other"]; !ok || len(s.Hooks["Start"]) != 1 {
		t.Errorf("merged:\n%s", b)
	}
	if _, err := AddSettingsHooks(nil, spec, []string{"/ll"}); err != nil {
		t.Errorf("empty file: %v", err)
	}
	for _, bad := range []string{`[]`, `{"hooks": 1}`, `{"hooks": {"Stop": {}}}`, `{`} {
		if _, err := AddSettingsHooks([]byte(bad), spec, []string{"/ll"}); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
