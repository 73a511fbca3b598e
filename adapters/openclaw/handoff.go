package openclaw

import (
	"context"
	"encoding/json"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

var _ adapters.HandoffReader = Harness{}

// ReadHandoff implements adapters.HandoffReader on a session of an agent
// database ("<database>#<session id>", the path telemetry follows): its
// transcript_events rows, compressed ones included, are session entries
// (kit.EntryHandoff) with OpenClaw's tools: read, edit and write name a
// path, exec runs a command. Its apply_patch calls are counted as tool
// calls without their files.
func (Harness) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	tool := func(name string, args json.RawMessage) adapters.HandoffItem {
		return kit.PathTool(name, args, []string{"read"}, []string{"edit", "write"}, []string{"exec"})
	}
	return kit.ScanSessionRows(context.Background(), path, rowReader(-1), func(line []byte) bool {
		return kit.EntryHandoff(line, add, tool)
	})
}
