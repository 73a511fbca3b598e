package copilot

import (
	"errors"
	"path/filepath"

	"github.com/lifeloop/lifeloop/adapters"
)

// `lifeloop host apply --adapter copilot` (measured with 1.0.102: every
// ~/.copilot/hooks/*.json runs, beside the hooks key of settings.json;
// $COPILOT_HOME/hooks when COPILOT_HOME is set; a file in Claude's shape
// loads as the per-launch plugin's does). lifeloop's hooks go into a file
// of their own there, hooks/lifeloop.json: the person's settings and hook
// files are never read or written, and `host remove` deletes the file
// (adapters.HostOwnFile). The folder hooks/ is created when missing and
// left in place by remove.

// hostHooksFile is lifeloop's own hooks file in Copilot's hooks folder.
const hostHooksFile = "lifeloop.json"

var _ adapters.HostOwnFile = Harness{}

// HostSettingsPath implements adapters.HostInstaller: hooks/lifeloop.json
// in $COPILOT_HOME, else ~/.copilot. Copilot's repository hooks
// (.github/hooks) load only in a trusted folder, so --project is refused.
func (Harness) HostSettingsPath(t adapters.HostTarget) (string, error) {
	if t.Project != "" {
		return "", &adapters.HostTargetError{Msg: "Copilot CLI's hooks are installed for the user ($COPILOT_HOME/hooks, else ~/.copilot/hooks); drop --project"}
	}
	home := homeDir(t.Getenv)
	if home == "" {
		return "", errors.New("neither COPILOT_HOME nor HOME is set; cannot find Copilot CLI's folder")
	}
	return filepath.Join(home, "hooks", hostHooksFile), nil
}

// HostOwnsFile implements adapters.HostOwnFile: hooks/lifeloop.json is
// lifeloop's alone.
func (Harness) HostOwnsFile() bool { return true }

// HostNotes implements adapters.HostInstaller.
func (Harness) HostNotes() []string {
	return []string{
		"Copilot CLI runs every hooks/*.json of its folder for every session, in the TUI and with -p; `lifeloop host remove --adapter copilot` deletes this file.",
		"Turns open from Copilot's session file under `lifeloop run` only; the hooks record the session's start and each turn's end.",
	}
}
