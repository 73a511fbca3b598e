package pi

import (
	"encoding/json"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

var _ adapters.HandoffReader = Harness{}

// ReadHandoff implements adapters.HandoffReader on a session file (the
// session-entry format, kit.ReadEntryHandoff) with Pi's built-in tools:
// read, edit and write name a path, bash runs a command. Pi keeps no
// todo list of its own.
func (Harness) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	return kit.ReadEntryHandoff(path, add, func(name string, args json.RawMessage) adapters.HandoffItem {
		return kit.PathTool(name, args, []string{"read"}, []string{"edit", "write"}, []string{"bash"})
	})
}
