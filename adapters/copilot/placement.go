package copilot

import (
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
)

// Launch placement (measured with 1.0.102 and the mock model:
// TestRenewCopilotTUI): Copilot CLI has no flag that adds to its system
// prompt, but reads the *.instructions.md files of every folder named in
// COPILOT_CUSTOM_INSTRUCTIONS_DIRS (comma-separated) into it, each a
// <custom_instruction>, at every launch, new or resumed. So a payload
// placed at launch is pre_session: PlaceAtLaunch carries it as
// `env LIFELOOP_COPILOT_PAYLOAD=TEXT` in front of the command,
// ExternalizePlacement moves it into a file of a folder of its own in the
// lifeloop session folder and names that folder in the harness's
// COPILOT_CUSTOM_INSTRUCTIONS_DIRS, after the user's own folders.

// payloadVar carries the envelope from PlaceAtLaunch to
// ExternalizePlacement; it never reaches the harness.
const payloadVar = "LIFELOOP_COPILOT_PAYLOAD"

// instructionsVar names the folders whose *.instructions.md Copilot CLI
// adds to its system prompt.
const instructionsVar = "COPILOT_CUSTOM_INSTRUCTIONS_DIRS"

// instructionsSuffix is the name ending Copilot CLI reads in such a folder.
const instructionsSuffix = ".instructions.md"

// PlaceAtLaunch implements adapters.LaunchPlacer: `env
// LIFELOOP_COPILOT_PAYLOAD=TEXT` in front of a command line that starts
// or resumes a session (appended to an assignment already there), target
// pre_session.
func (Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	return kit.PlaceEnvPayload(argv, start, payloadVar, text, start > 0 && start <= len(argv) && startsSession(argv[start:]))
}

// ExternalizePlacement implements adapters.PlacementExternalizer: the
// envelope in LIFELOOP_COPILOT_PAYLOAD goes into a new
// lifeloop-placement-*.instructions.md in a folder made for this launch
// (in the lifeloop session folder, $LIFELOOP_SESSION_DIR, else beside
// the file files.Write stores), which is appended to the
// COPILOT_CUSTOM_INSTRUCTIONS_DIRS of the command line's assignment or of
// files.Env (files.Setenv sets it for the harness); the assignment leaves
// the command line, with the `env` in front of it when nothing else is
// assigned there.
func (Harness) ExternalizePlacement(argv []string, start int, files adapters.PlacementFiles) ([]string, error) {
	for i := 0; i < start && i < len(argv); i++ {
		text, ok := strings.CutPrefix(argv[i], payloadVar+"=")
		if !ok {
			continue
		}
		base := adapters.EnvValue(files.Env, "LIFELOOP_SESSION_DIR")
		if base == "" {
			p, err := files.Write("")
			if err != nil {
				return argv, err
			}
			base = filepath.Dir(p)
		}
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		dir := filepath.Join(base, "copilot-instructions-"+hex.EncodeToString(rnd[:]))
		if _, err := files.WriteIn(dir, instructionsSuffix, text); err != nil {
			return argv, err
		}
		user, own := adapters.EnvValue(files.Env, instructionsVar), -1
		for j := 0; j < start && j < len(argv); j++ {
			if v, ok := strings.CutPrefix(argv[j], instructionsVar+"="); ok {
				user, own = v, j
			}
		}
		dirs := dir
		if user != "" {
			dirs = user + "," + dir
		}
		out := slices.Clone(argv)
		switch {
		case own >= 0:
			out[own] = instructionsVar + "=" + dirs
		case files.Setenv == nil:
			out[i] = instructionsVar + "=" + dirs
			return out, nil
		default:
			files.Setenv(instructionsVar, dirs)
		}
		if i == 1 && out[0] == "env" && (len(out) < 3 || !strings.Contains(out[2], "=")) {
			return out[2:], nil
		}
		return slices.Delete(out, i, i+1), nil
	}
	return argv, nil
}
