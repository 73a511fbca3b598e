package kit

import (
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
)

// PlaceEnvPayload places text at launch (target pre_session) as `env
// VAR=TEXT` in front of the program at argv[start], for a plug-in whose
// ExternalizePlacement later moves the assignment into a file the harness
// reads; starts says the command line starts or resumes a session (else
// nothing is placed). A second placement joins the first with a blank
// line.
func PlaceEnvPayload(argv []string, start int, variable, text string, starts bool) ([]string, contract.ManifestPlacementClass, bool) {
	if start <= 0 || start > len(argv) || !starts {
		return slices.Clone(argv), "", false
	}
	out := slices.Clone(argv)
	for i := 0; i < start; i++ {
		if v, ok := strings.CutPrefix(out[i], variable+"="); ok {
			out[i] = variable + "=" + v + "\n\n" + text
			return out, contract.ManifestPreSession, true
		}
	}
	return append([]string{"env", variable + "=" + text}, out...), contract.ManifestPreSession, true
}
