package kit

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/lifeloop/lifeloop/hooks"
)

// AddSettingsHooks returns the settings file base (JSON, may be empty)
// with the command hooks of spec (hooks.SettingsFile, running
// hookCommand) added after the hooks base has for the same events:
// a settings file of the person's, copied for one launch, that keeps
// everything it said. base must be a JSON object whose "hooks", if any,
// maps event names to lists; else an error says what is wrong.
func AddSettingsHooks(base []byte, spec *hooks.Spec, hookCommand []string) ([]byte, error) {
	settings := map[string]any{}
	if len(bytes.TrimSpace(base)) > 0 {
		if err := json.Unmarshal(base, &settings); err != nil || settings == nil {
			return nil, errors.New("not a JSON object")
		}
	}
	var own struct {
		Hooks map[string][]any `json:"hooks"`
	}
	if err := json.Unmarshal(hooks.SettingsFile(spec, hookCommand, nil), &own); err != nil {
		return nil, err
	}
	all, ok := settings["hooks"].(map[string]any)
	if settings["hooks"] != nil && !ok {
		return nil, errors.New(`"hooks" is not an object`)
	}
	if all == nil {
		all = map[string]any{}
	}
	for event, groups := range own.Hooks {
		have, ok := all[event].([]any)
		if all[event] != nil && !ok {
			return nil, errors.New(`"hooks"."` + event + `" is not a list`)
		}
		all[event] = append(have, groups...)
	}
	settings["hooks"] = all
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(settings); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
