package qwen

import (
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
)

// appendPromptFlag adds instructions to the session's system prompt
// (measured with 0.24.4: the text reaches the model's system prompt, a
// fresh session or a resumed one).
const appendPromptFlag = "--append-system-prompt"

// PlaceAtLaunch implements adapters.LaunchPlacer; argv is never
// modified. The text goes into --append-system-prompt (pre_session):
// before the launch's own value of it (separated by a blank line), else
// as a new option at start. There is no file form: the body stays in
// argv, which lifeloop refuses unless the session opted in
// (--payload-argv-ok).
func (Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	out := slices.Clone(argv)
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return out, "", false
	}
	for i := start; i < len(out); i++ {
		switch a := out[i]; {
		case a == "--":
			i = len(out)
		case a == appendPromptFlag && i+1 < len(out):
			out[i+1] = text + "\n\n" + out[i+1]
			return out, contract.ManifestPreSession, true
		case strings.HasPrefix(a, appendPromptFlag+"="):
			out[i] = appendPromptFlag + "=" + text + "\n\n" + strings.TrimPrefix(a, appendPromptFlag+"=")
			return out, contract.ManifestPreSession, true
		}
	}
	return slices.Insert(out, start, appendPromptFlag, text), contract.ManifestPreSession, true
}
