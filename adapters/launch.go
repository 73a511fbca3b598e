package adapters

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
)

// Launch-time placement and relaunch, asked of the harness (LaunchPlacer,
// PlacementExternalizer, Relauncher): each harness folder says how its
// command line carries a rendered transport envelope and how it continues
// or freshly restarts a session after a renewal, as measured against its
// real binary.

// PlaceAtLaunch returns argv with text delivered into the new session the
// command starts, the manifest placement class the delivery uses, and
// ok=true; argv itself is never modified. ok is false (argv returned
// unchanged) when the harness has no launch placement, when argv does not
// start a harness session, or when argv already sets the slot in a way
// that cannot be combined.
func (a *Adapter) PlaceAtLaunch(argv []string, text string) (out []string, target contract.ManifestPlacementClass, ok bool) {
	p, can := a.h.(LaunchPlacer)
	start := parseLaunch(argv).argStart
	if !can || start > len(argv) || start == 0 {
		return slices.Clone(argv), "", false
	}
	return p.PlaceAtLaunch(argv, start, text)
}

// RelaunchArgv returns the command line that starts the harness again
// after lifeloop stopped it for a renewal, and ok=true; argv (the command
// line the session was first launched with, before PrepareLaunch) is never
// modified. With resume and a harnessSessionID it continues that harness
// conversation; otherwise it starts a fresh one. ok is false when the
// harness has no relaunch path, when argv does not start a harness
// session, or when resume is asked without a harnessSessionID.
func (a *Adapter) RelaunchArgv(argv []string, harnessSessionID string, resume bool) ([]string, bool) {
	r, can := a.h.(Relauncher)
	start := parseLaunch(argv).argStart
	if !can || start == 0 || start > len(argv) || (resume && harnessSessionID == "") {
		return slices.Clone(argv), false
	}
	return r.RelaunchArgv(argv, start, harnessSessionID, resume)
}

// ExternalizePlacement moves a transport envelope PlaceAtLaunch put on the
// command line into a file (write stores the text privately and returns
// its path), where the harness can read it from one, so the payload is not
// in the process table. argv is returned unchanged for harnesses without a
// file form, or when no envelope was placed.
func (a *Adapter) ExternalizePlacement(argv []string, write func(text string) (string, error)) ([]string, error) {
	e, can := a.h.(PlacementExternalizer)
	start := parseLaunch(argv).argStart
	if !can || start == 0 || start > len(argv) {
		return argv, nil
	}
	return e.ExternalizePlacement(argv, start, write)
}

// HasTransport reports whether s holds a rendered transport envelope as
// PlaceAtLaunch puts it in an argv element.
func HasTransport(s string) bool {
	for _, m := range transportMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// transportMarkers begin a rendered transport envelope as it appears in a
// placed argv element: verbatim, or as a TOML or JSON string.
var transportMarkers = []string{`{"payloads":[`, `{\"payloads\":[`}

// RedactPlacement returns argv with every transport envelope placed by
// PlaceAtLaunch withheld: from the envelope's start to the end of the
// element, the text is replaced by "<continuation payloads withheld: N
// bytes>". A command line kept in session records or printed by status
// must go through it, because payload bodies are never shown. argv itself
// is never modified.
func RedactPlacement(argv []string) []string {
	out := slices.Clone(argv)
	for i, arg := range out {
		for _, m := range transportMarkers {
			if at := strings.Index(arg, m); at >= 0 {
				out[i] = fmt.Sprintf("%s<continuation payloads withheld: %d bytes>", arg[:at], len(arg)-at)
				break
			}
		}
	}
	return out
}

// InsertArgs returns argv with extra inserted at the harness's first own
// argument (past the program and any launcher in front of it).
func InsertArgs(argv, extra []string) []string {
	if len(extra) == 0 {
		return argv
	}
	at := min(ArgStart(argv), len(argv))
	out := make([]string, 0, len(argv)+len(extra))
	out = append(out, argv[:at]...)
	out = append(out, extra...)
	return append(out, argv[at:]...)
}
