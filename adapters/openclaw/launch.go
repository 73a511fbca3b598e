package openclaw

import (
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// Relaunch (measured with 2026.9.6 and the loopback mock model,
// TestRenewOpenClawTUIUnderLifeloop in e2e):
//
//	openclaw chat [--session KEY]   the local TUI (= tui --local) on session key KEY ("main" by
//	                                default: agent:main:main), continuing the key's current session
//	--message TEXT                  sent as the first prompt once the TUI is up
//	SIGTERM                         ends the TUI cleanly (exit 0), its session stored
//
// A renewal stops the TUI with SIGTERM and starts it again on the same
// session key (resume), or on a new key (fresh). The TUI takes a launch
// message only on its command line (--message; no file form), and its
// plugins' hooks do not run, so a continuation payload goes there: at the
// start of the message the TUI sends once it is up, only in a session
// that allowed payload bodies in argv (`lifeloop run --payload-argv-ok`;
// refused otherwise, ArgvPlacementError). The one-shot `agent` command has
// no relaunch path.

// ReadyText implements adapters.InputReadyText: the TUI's status once its
// local runtime is up. Before, it draws "starting up" (17–56 s measured
// on two busy cores, with and without lifeloop) and refuses a prompt
// ("local runtime not ready — message not sent"), so keys typed during a
// renewal wait for this.
func (Harness) ReadyText() string { return "local ready" }

// tuiCommands start OpenClaw's TUI; tui and terminal run locally only
// with --local (else they attach to a Gateway).
var tuiCommands = map[string]bool{"chat": true, "tui": true, "terminal": true}

// StopSignal implements adapters.Relauncher: the TUI exits 0 on SIGTERM,
// whatever its editor holds.
func (Harness) StopSignal() syscall.Signal { return syscall.SIGTERM }

// RelaunchArgv implements adapters.Relauncher for the local TUI; argv is
// never modified. To resume, --message is dropped (it was sent) and the
// rest stays: the same session key continues the session it names, the
// one lifeloop followed. Fresh replaces --session with a new key,
// lifeloop-<time>, which starts a new session, and keeps --message.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	if start <= 0 || start >= len(argv) || (resume && id == "") || !isLocalTUI(argv[start:]) {
		return slices.Clone(argv), false
	}
	drop := "--session"
	if resume {
		drop = messageFlag
	}
	out := slices.Clone(argv[:start])
	args := argv[start:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == drop:
			i++ // and its value
		case strings.HasPrefix(a, drop+"="):
		default:
			out = append(out, a)
		}
	}
	if !resume {
		out = append(out, "--session", "lifeloop-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	}
	return out, true
}

// isLocalTUI reports a command line starting the local TUI: chat, or tui
// or terminal with --local.
func isLocalTUI(args []string) bool {
	_, cmd, rest := command(args)
	if !tuiCommands[cmd] || asksHelp(args) {
		return false
	}
	return cmd == "chat" || slices.Contains(rest, "--local")
}

// messageFlag is the TUI's launch message.
const messageFlag = "--message"

// PlaceAtLaunch implements adapters.LaunchPlacer for the local TUI; argv
// is never modified. The text goes first in the launch message: before
// the value of --message (separated by a blank line), else as `--message
// TEXT` at the end. Target pre_frame_leading: the TUI sends the message as
// its first prompt once its local runtime is up, so the text leads the
// first frame's user message. There is no file form: the body stays in
// argv, which lifeloop refuses unless the session opted in.
func (Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	out := slices.Clone(argv)
	if start <= 0 || start >= len(argv) || !isLocalTUI(argv[start:]) {
		return out, "", false
	}
	for i := start; i < len(out); i++ {
		switch a := out[i]; {
		case a == messageFlag && i+1 < len(out):
			out[i+1] = text + "\n\n" + out[i+1]
			return out, contract.ManifestPreFrameLeading, true
		case strings.HasPrefix(a, messageFlag+"="):
			out[i] = messageFlag + "=" + text + "\n\n" + strings.TrimPrefix(a, messageFlag+"=")
			return out, contract.ManifestPreFrameLeading, true
		}
	}
	return append(out, messageFlag, text), contract.ManifestPreFrameLeading, true
}
