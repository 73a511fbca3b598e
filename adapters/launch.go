package adapters

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// start a harness session, when argv already sets the slot in a way that
// cannot be combined, or — unless the adapter was made WithArgvPayloads —
// when the harness's placement for argv has no private channel: the body
// would stay on the command line after ExternalizePlacement, readable by
// every local user through ps and /proc/PID/cmdline (ArgvPlacementError
// says so).
func (a *Adapter) PlaceAtLaunch(argv []string, text string) (out []string, target contract.ManifestPlacementClass, ok bool) {
	p, can := a.h.(LaunchPlacer)
	start := parseLaunch(argv).argStart
	if !can || start > len(argv) || start == 0 {
		return slices.Clone(argv), "", false
	}
	if !a.argvPayloads && !a.placesPrivately(p, argv, start) {
		return slices.Clone(argv), "", false
	}
	return p.PlaceAtLaunch(argv, start, text)
}

// ErrPayloadInArgv is the refusal of a launch placement whose payload body
// would be on the harness's command line.
var ErrPayloadInArgv = errors.New("no private channel for a launch-time payload on this command line: the body would be in the harness's argv, readable by every local user (ps, /proc/PID/cmdline); `lifeloop run --payload-argv-ok` allows it")

// WithArgvPayloads returns a copy of the adapter whose launch placements
// may leave the payload body in argv where the harness has no private
// channel for it: the caller's explicit opt-in.
func (a *Adapter) WithArgvPayloads() *Adapter {
	c := *a
	c.argvPayloads = true
	return &c
}

// ArgvPayloads reports whether the adapter was made WithArgvPayloads.
func (a *Adapter) ArgvPayloads() bool { return a.argvPayloads }

// ArgvPlacementError returns an error wrapping ErrPayloadInArgv when
// PlaceAtLaunch refuses argv only because the body would stay in argv —
// and, when want is not "", the placement it refuses lands in want — and
// nil otherwise.
func (a *Adapter) ArgvPlacementError(argv []string, want contract.ManifestPlacementClass) error {
	p, can := a.h.(LaunchPlacer)
	start := parseLaunch(argv).argStart
	if a.argvPayloads || !can || start > len(argv) || start == 0 || a.placesPrivately(p, argv, start) {
		return nil
	}
	if _, target, ok := p.PlaceAtLaunch(argv, start, argvProbe); !ok || want != "" && target != want {
		return nil
	}
	return fmt.Errorf("adapter %s: %w", a.ID, ErrPayloadInArgv)
}

// argvProbe is the envelope placesPrivately places: its marker must leave
// argv.
const argvProbe = `{"payloads":[{"payload_id":"probe","body":"lifeloop-argv-probe-5d1c"}]}`

// placesPrivately reports whether a placement on argv keeps the body out
// of the process table: the probe envelope, placed and then externalized
// with files that store nothing, is in no element of the command line
// that would start. True when nothing can be placed on argv.
func (a *Adapter) placesPrivately(p LaunchPlacer, argv []string, start int) bool {
	placed, _, ok := p.PlaceAtLaunch(argv, start, argvProbe)
	if !ok {
		return true
	}
	if e, can := a.h.(PlacementExternalizer); can {
		files := PlacementFiles{
			Env:   os.Environ(),
			Write: func(string) (string, error) { return "/nonexistent/" + PlacementFilePrefix + "probe", nil },
			WriteIn: func(dir, suffix, _ string) (string, error) {
				return filepath.Join(dir, PlacementFilePrefix+"probe"+suffix), nil
			},
		}
		out, err := e.ExternalizePlacement(placed, parseLaunch(placed).argStart, files)
		if err != nil {
			return false
		}
		placed = out
	}
	return !slices.ContainsFunc(placed, HasTransport)
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
// command line into a private file (see PlacementFiles), where the harness
// can read it from one, so the payload is not in the process table. It
// runs before every start of the harness. argv is returned unchanged when
// no envelope was placed, and where the harness has no file form for the
// command line — which PlaceAtLaunch only allows WithArgvPayloads. A
// user's own argument that looks like an envelope is left alone.
func (a *Adapter) ExternalizePlacement(argv []string, files PlacementFiles) ([]string, error) {
	e, can := a.h.(PlacementExternalizer)
	start := parseLaunch(argv).argStart
	if !can || start == 0 || start > len(argv) {
		return argv, nil
	}
	return e.ExternalizePlacement(argv, start, files)
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

// LaunchKind is which start of a session's harness a launch is: the
// session's first, or a renewal's relaunch resuming the harness's
// conversation or starting a fresh one.
type LaunchKind string

const (
	LaunchFirst  LaunchKind = "first"
	LaunchResume LaunchKind = "resume"
	LaunchFresh  LaunchKind = "fresh"
)

// LaunchSite is where a launch of kind through argv (PrepareLaunch
// applied) places payloads: the slot of its command line
// (contract.LaunchSite).
func (a *Adapter) LaunchSite(argv []string, kind LaunchKind) contract.PlacementSite {
	_, slot, _ := a.PlaceAtLaunch(argv, argvProbe)
	return contract.LaunchSite(slot, kind == LaunchFirst)
}

// LaunchPlacement is what PlaceLaunchPayloads did: Argv carries Placed
// (rendered as one transport envelope); Rest are the payloads the launch
// could not carry, in their order.
type LaunchPlacement struct {
	Argv         []string
	Target       contract.ManifestPlacementClass
	Placed, Rest []contract.PayloadEnvelope
}

// PlaceLaunchPayloads resolves payloads at the launch site of argv
// (LaunchSite, the one resolver) and places those it delivers on argv's
// slot. It fails when the placement is refused only because the body
// would be in argv (ArgvPlacementError): for a first launch, when a
// payload would go into pre_session.
func (a *Adapter) PlaceLaunchPayloads(argv []string, kind LaunchKind, payloads []contract.PayloadEnvelope) (LaunchPlacement, error) {
	pl := LaunchPlacement{Argv: argv}
	site, m := a.LaunchSite(argv, kind), a.Manifest()
	for _, p := range payloads {
		d := site.Resolve(m, p)
		if d.Target != nil && (d.Outcome == contract.PlacementOutcomeDelivered || d.Outcome == contract.PlacementOutcomeDegraded) {
			pl.Placed = append(pl.Placed, p)
		} else {
			pl.Rest = append(pl.Rest, p)
		}
	}
	if len(pl.Placed) == 0 {
		if site.Slot == "" && kind == LaunchFirst && slices.ContainsFunc(payloads, func(p contract.PayloadEnvelope) bool {
			t := contract.HookSite(contract.EventSessionStarting).Resolve(m, p).Target
			return t != nil && *t == contract.ManifestPreSession
		}) {
			return pl, a.ArgvPlacementError(argv, contract.ManifestPreSession)
		}
		return pl, nil
	}
	text, err := contract.RenderTransport(pl.Placed)
	if err != nil {
		return LaunchPlacement{Argv: argv, Rest: payloads}, fmt.Errorf("render the transport envelope: %w", err)
	}
	out, target, ok := a.PlaceAtLaunch(argv, string(text))
	if !ok || target != site.Slot {
		if err := a.ArgvPlacementError(argv, site.Slot); err != nil {
			return LaunchPlacement{Argv: argv, Rest: payloads}, err
		}
		return LaunchPlacement{Argv: argv, Rest: payloads}, fmt.Errorf("adapter %s cannot place payloads on %q", a.ID, argv)
	}
	pl.Argv, pl.Target = out, target
	return pl, nil
}
