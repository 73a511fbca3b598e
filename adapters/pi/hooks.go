package pi

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// Pi has no command hooks; its extensions (TypeScript modules loaded in
// Pi's own process) get its lifecycle events. `pi --extension FILE` loads
// one for a launch, next to the user's own, without touching their
// files. The hook bridge is such an extension (Pi's glue, bridge.ts,
// after the kit's bridge runtime), written into the lifeloop session
// folder: it hands the wrapper these hook calls, as `lifeloop host-hook
// --adapter pi --hook EVENT` would, named as Pi names them:
//
//	session_start       session.started (reason: startup, new, resume, fork, reload)
//	before_agent_start  frame.opening; context lifeloop returns goes to the model with the prompt
//	agent_start         frame.opened
//	agent_end           frame.ending, frame.ended
//	session_shutdown    session.ending (Pi sends none when a signal ends it)
//
// At each session start the extension also writes the session file's path
// into the lifeloop session folder (sessionPointer), which discovery then
// follows: a launch cannot choose its session file on the command line,
// and concurrent launches in one folder are otherwise told apart by order
// only.
//
// The frame id is "<session id>#<n>" for the n-th user message of the
// session, the id the session-file parser gives the same turn.

//go:embed bridge.ts
var bridgeSource string

// Hooks implements adapters.NativeHooks. Each call returns a new Spec.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "pi",
		Hooks: []hooks.Hook{
			{Name: "session_start", Role: hooks.RoleSessionStart},
			{Name: "before_agent_start", Role: hooks.RolePromptSubmit},
			{Name: "agent_start", Role: hooks.RoleModelRequest},
			{Name: "agent_end", Role: hooks.RoleTurnStop},
			{Name: "session_shutdown", Role: hooks.RoleSessionEnd},
		},
	}
}

// bridgedFrameEvents are the frame events the extension reports natively.
var bridgedFrameEvents = []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded}

// BridgedFrameEvents implements adapters.HookBridge.
func (Harness) BridgedFrameEvents() []contract.Event { return slices.Clone(bridgedFrameEvents) }

// bridgeFile is the per-launch extension in the session folder.
const bridgeFile = "pi-lifeloop-bridge.ts"

// BridgeArgs implements adapters.HookBridge: the bridge extension, written
// into the session folder, loaded with --extension FILE (Pi loads it even
// with --no-extensions). Nothing for a command line that starts no
// session. Pi exits 1 at launch when an extension it was given fails to
// load, so a bridge file that cannot be written or read back as written
// is never given to it: the bridge is unavailable
// (adapters.BridgeUnavailable) and Pi starts without it.
func (Harness) BridgeArgs(b adapters.BridgeTarget) ([]string, error) {
	start := adapters.ArgStart(b.Argv)
	if start <= 0 || start > len(b.Argv) || !startsSession(b.Argv[start:]) {
		return nil, nil
	}
	src := BridgeSource(b.HookCommand)
	path := filepath.Join(b.SessionDir, bridgeFile)
	if b.SharedDir != "" {
		// Pi compiles an extension through jiti, whose cache is keyed by
		// the file's path: a path that changed at every launch cost each
		// one a TypeScript compilation (about 80 ms). The content (and so
		// the name) changes only with the lifeloop program's path.
		sum := sha256.Sum256(src)
		path = filepath.Join(b.SharedDir, fmt.Sprintf("pi-lifeloop-bridge-%x.ts", sum[:6]))
	}
	if err := writeBridge(path, src); err != nil {
		return nil, &adapters.BridgeUnavailable{Reason: "Pi's bridge extension " + err.Error()}
	}
	// The pointer starts empty: telemetry then waits for the file the
	// extension names instead of discovering by order (TelemetrySource).
	if err := kit.WriteFileAtomic(filepath.Join(b.SessionDir, sessionPointer), nil); err != nil {
		return nil, &adapters.BridgeUnavailable{Reason: "Pi's bridge extension: " + err.Error()}
	}
	return []string{extensionFlag, path}, nil
}

// writeBridge makes path hold src, unless it already does, and reads it
// back: Pi is given only a file that reads as written.
func writeBridge(path string, src []byte) error {
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, src) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), kit.DirPerm); err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	if err := kit.WriteFileAtomic(path, src); err != nil {
		return fmt.Errorf("%s cannot be written: %w", path, err)
	}
	have, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s cannot be read: %w", path, err)
	}
	if !bytes.Equal(have, src) {
		return fmt.Errorf("%s does not read as written", path)
	}
	return nil
}

// sessionPointer is the file in the lifeloop session folder holding the
// path of the session file the bridge extension's Pi writes.
const sessionPointer = "pi-session-file"

// BridgeSource returns the bridge extension: the kit's bridge runtime
// (kit.BridgeModule), which calls the wrapper's control socket (named by
// $LIFELOOP_CONTROL_SOCKET) and, when that does not answer, runs
// hookCommand (the lifeloop program and any leading arguments), then
// bridge.ts.
func BridgeSource(hookCommand []string) []byte {
	return kit.BridgeModule("pi", hookCommand, "const SESSION_POINTER = "+hooks.JSONString(sessionPointer)+";\n"+bridgeSource)
}
