package adapters

import (
	"strings"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/telemetry"
)

// A harness is one folder under adapters/ (adapters/<harness>) holding everything lifeloop knows about it, and one line in the
// registry (adapters/builtin). Every harness implements Harness; what a
// harness can do beyond process supervision it says by implementing the
// optional interfaces below. lifeloop's generic packages ask the harness
// through these interfaces and never name one.

// Harness is what every harness provides: who it is, how it is recognised
// on a command line, and its manifest with the tests that prove it.
type Harness interface {
	// Describe says who the harness is.
	Describe() Description
	// Manifest builds a fresh manifest: an honest statement of what
	// lifeloop provides for the harness.
	Manifest() contract.AdapterManifest
	// Evidence maps each manifest claim that is not `unavailable` to the
	// Go test that proves it (keys as Claims prints them).
	Evidence() map[string]string
}

// Description is a harness's identity.
type Description struct {
	// ID is the stable wire adapter_id.
	ID string
	// Aliases are other names Lookup accepts.
	Aliases []string
	// DisplayName is the human-facing label.
	DisplayName string
	// Conformance is the registry posture (v1 or pre-conformance).
	Conformance Conformance
	// Names are the executable basenames and npm package names that
	// identify the harness on a command line.
	Names []string
	// OrgLoopHarness is the harness's name in OrgLoop's vocabulary
	// (contract.OrgLoopHarnesses); "" projects as "other".
	OrgLoopHarness string
}

// LaunchPreparer adjusts the command line of a launch.
type LaunchPreparer interface {
	// PrepareLaunch returns the command line to start for argv, whose
	// harness arguments begin at start. It must not modify argv.
	PrepareLaunch(argv []string, start int) []string
}

// LaunchPlacer carries a rendered transport envelope into a new harness
// session through its command line.
type LaunchPlacer interface {
	// PlaceAtLaunch returns argv with text delivered into the session the
	// command starts, the placement class used and true; false (and argv
	// unchanged) when argv starts no session or the slot cannot take it.
	// argv must not be modified.
	PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool)
}

// PlacementExternalizer moves an envelope PlaceAtLaunch put on the
// command line into a private file, out of the process table. A harness
// whose launch placement has no such file form for some command line
// leaves the envelope in argv there, and lifeloop refuses that placement
// unless the caller opted in (Adapter.WithArgvPayloads).
type PlacementExternalizer interface {
	// ExternalizePlacement returns argv reading the envelope from a file
	// stored through files; argv unchanged when nothing was placed or
	// when this command line has no file form.
	ExternalizePlacement(argv []string, start int, files PlacementFiles) ([]string, error)
}

// PlacementFiles is where ExternalizePlacement stores placed text: files
// only the user can read (0600), which lifeloop removes when the session
// ends.
type PlacementFiles struct {
	// Env is the harness's environment (where its own folders are).
	Env []string
	// Write stores text in a new file in lifeloop's session folder (0700)
	// and returns its path.
	Write func(text string) (string, error)
	// WriteIn stores text in a new file in dir, a folder of the harness's
	// own that it reads the file from by name, and returns its path. The
	// file's name is a fixed prefix (PlacementFilePrefix), a unique part
	// and suffix; it is created exclusively, never replacing a file.
	WriteIn func(dir, suffix, text string) (string, error)
	// Setenv sets a variable in the harness's environment for this start
	// (in place of Env's entry for it), so a value never reaches the
	// command line; nil when the command line must carry it.
	Setenv func(name, value string)
}

// PlacementFilePrefix begins the name of every file WriteIn creates.
const PlacementFilePrefix = "lifeloop-placement-"

// Relauncher starts the harness again after a renewal stopped it.
type Relauncher interface {
	// StopSignal is the signal that, sent to the harness's process
	// group, ends its interactive session cleanly whatever its screen
	// shows: an empty prompt, a draft the person has not sent, an open
	// permission dialog. A renewal never types into the harness's
	// terminal to stop it: Enter would approve the dialog's default
	// choice or send the draft as a turn.
	StopSignal() syscall.Signal
	// RelaunchArgv returns the command line that continues the harness
	// session harnessSessionID (resume) or starts a fresh one, and true;
	// false when argv has no relaunch path. argv is the command line the
	// session was first launched with (before PrepareLaunch); it must
	// not be modified.
	RelaunchArgv(argv []string, start int, harnessSessionID string, resume bool) ([]string, bool)
}

// InputReadyText is a harness whose TUI takes typed keys only some time
// after it has left canonical mode: ReadyText is what it draws once it
// takes them (its prompt's placeholder or footer). Keys a renewal held
// wait for it.
type InputReadyText interface {
	ReadyText() string
}

// SessionPinner is a harness whose launch can choose its own session id,
// so telemetry finds exactly this launch's file.
type SessionPinner interface {
	// PinSession returns argv choosing a new session id and the id; argv
	// unchanged and "" when the command line already chooses a session.
	PinSession(argv []string, start int) ([]string, string)
}

// SessionResumer is a harness whose command line can continue a session
// it recorded earlier (resume, continue): lifeloop then follows that
// session's file from its current end instead of waiting for a new one.
type SessionResumer interface {
	// ResumedSession returns the harness session id argv continues, ""
	// for the harness's latest session of the folder, and true; false
	// when argv starts a new session, or continues one lifeloop cannot
	// tell from the command line (an interactive picker, an index).
	ResumedSession(argv []string, start int) (string, bool)
}

// Telemetry is a harness whose own session files lifeloop reads.
type Telemetry interface {
	// TelemetrySource says where the file of a launch lives and how to
	// read it; an error says why it cannot be found (e.g. no HOME).
	TelemetrySource(t TelemetryTarget) (TelemetrySource, error)
}

// TelemetryTarget is the launch whose telemetry is wanted.
type TelemetryTarget struct {
	// Env is the harness's environment (where its files live, its
	// configuration).
	Env []string
	// Cwd is the harness's working folder.
	Cwd string
	// LaunchedAt is when the harness started; files born before it
	// (minus slack) belong to other launches.
	LaunchedAt time.Time
	// SessionID is the harness session id when the launch fixed it.
	SessionID string
	// Now is the clock.
	Now func() time.Time
}

// TelemetrySource finds and reads a harness's session file.
type TelemetrySource struct {
	// Kind names the file in receipts' provenance ("transcript", …).
	Kind telemetry.SourceKind
	// Discoverer lists the files the launch may be writing.
	Discoverer telemetry.Discoverer
	// NewParser returns a parser for one file.
	NewParser func() telemetry.Parser
}

// NativeHooks is a harness with hooks of its own that can call `lifeloop
// host-hook`.
type NativeHooks interface {
	// Hooks describes them: names, lifecycle roles, frame ids, the
	// settings-file shape.
	Hooks() *hooks.Spec
}

// HookBridge is a harness whose hooks `lifeloop run` can point at itself
// for one launch, without touching the user's files.
type HookBridge interface {
	NativeHooks
	// BridgeArgs returns the arguments that install the bridge for one
	// launch, writing what they need into b.SessionDir; nil when the
	// user already chose the mechanism.
	BridgeArgs(b BridgeTarget) ([]string, error)
	// BridgedFrameEvents are the frame events (and an identified
	// compaction) the bridge reports natively (a transcript's version of
	// them waits for the hook).
	BridgedFrameEvents() []contract.Event
}

// BridgeEnviron is a hook bridge installed (also, or only) through the
// harness's environment: a harness that loads a plugin named in a
// variable, say.
type BridgeEnviron interface {
	HookBridge
	// BridgeEnv returns the variables (NAME=VALUE) that install the
	// bridge for one launch, composed with what b.Env already holds for
	// them (they replace those entries: the harness's own value must be
	// kept inside the new one); nil when the bridge needs none or cannot
	// be installed.
	BridgeEnv(b BridgeTarget) ([]string, error)
}

// HookChooser is a hook bridge that installs only some of its hooks in
// some launches: a one-shot whose telemetry reports the same moments
// leaves out the hooks that would only repeat them (the harness pays for
// every hook call it makes).
type HookChooser interface {
	HookBridge
	// LaunchHooks returns the hooks launch b installs and the frame
	// events they report natively: Hooks() and BridgedFrameEvents(), or
	// fewer of each.
	LaunchHooks(b BridgeTarget) (*hooks.Spec, []contract.Event)
}

// BridgeUnavailable is a BridgeEnv (or BridgeArgs) error that does not
// stop the launch: the harness runs without the bridge, for the reason
// given, which lifeloop logs and records in one capability.degraded
// receipt (hooks: native → unavailable).
type BridgeUnavailable struct{ Reason string }

func (e *BridgeUnavailable) Error() string { return "hook bridge not installed: " + e.Reason }

// BridgeTarget is the launch a hook bridge is installed for.
type BridgeTarget struct {
	// Argv is the command line so far (after PrepareLaunch).
	Argv []string
	// SessionDir is the lifeloop session folder (0700).
	SessionDir string
	// Env is the harness's environment.
	Env []string
	// HookCommand is the lifeloop program the hooks run.
	HookCommand []string
	// HookHTTP opens the wrapper's HTTP door for hook calls and says where
	// it listens; nil when the wrapper has none. A harness that can post
	// its hooks over HTTP uses it instead of HookCommand: no process is
	// started per call.
	HookHTTP func() (hooks.HTTPTarget, error)
	// SharedDir is a folder (0700) kept from launch to launch, for bridge
	// files whose path should not change (a harness may cache what it
	// compiled from them by path); "" keeps them in SessionDir.
	SharedDir string
	// Telemetry says the launch follows the harness's telemetry (and pins
	// its session where the harness lets a launch choose it). Places says
	// a hook may have to place something in the harness: a client
	// answers the session's moments, or payloads wait for a hook.
	Telemetry, Places bool
}

// HostInstaller is a harness whose settings `lifeloop host apply` can add
// lifeloop's hooks to, for launches without `lifeloop run`.
type HostInstaller interface {
	NativeHooks
	// HostSettingsPath returns the settings file to change.
	HostSettingsPath(t HostTarget) (string, error)
	// HostNotes are what a person installing the hooks must know.
	HostNotes() []string
}

// HostOwnFile is a HostInstaller whose settings file is lifeloop's own
// (a harness that loads every file of a hooks folder): `host remove`
// deletes it, and its backup, once nothing but lifeloop's hooks was in
// it, so the person's files are never touched.
type HostOwnFile interface {
	HostOwnsFile() bool
}

// HostTarget says which settings `host apply|inspect|remove` asked for.
type HostTarget struct {
	// Getenv reads lifeloop's environment (HOME and the harness's own
	// variables).
	Getenv func(string) string
	// Project is --project DIR ("" when not given); Cwd the current folder.
	Project string
	Cwd     string
	// User is --user.
	User bool
}

// HostTargetError is a HostSettingsPath failure caused by the flags
// given (a usage error), as opposed to the environment.
type HostTargetError struct{ Msg string }

func (e *HostTargetError) Error() string { return e.Msg }

// EnvValue returns the last value of key in env ("" when unset): how a
// harness reads its own variables from the environment it runs in.
func EnvValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}
