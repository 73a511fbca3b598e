package cli

import (
	"slices"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
)

// TestNotePayload: a note becomes a valid continuation payload with its
// kind, format, size and digest, asking for the payload placements the
// harness's manifest can carry at a launch.
func TestNotePayload(t *testing.T) {
	reg := builtin.Default()
	const body = "# Handoff\n\nContinue with step 2.\n"
	for _, tc := range []struct {
		adapter, name, format string
		places                []contract.PlacementClass
	}{
		{"claude", "handoff.md", "text/markdown", []contract.PlacementClass{contract.PlacementPrePromptFrame, contract.PlacementDeveloperEquivalentFrame}},
		{"codex", "notes.txt", "text/plain", []contract.PlacementClass{contract.PlacementPrePromptFrame, contract.PlacementDeveloperEquivalentFrame}},
		{"gemini", "-", "text/plain", []contract.PlacementClass{contract.PlacementPrePromptFrame}},
	} {
		a, err := reg.Lookup(tc.adapter)
		if err != nil {
			t.Fatal(err)
		}
		p, err := notePayload([]byte(body), tc.name, a.Manifest(), "pay_note1")
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Check(time.Now()); err != nil {
			t.Fatalf("%s: the note payload is not valid: %v", tc.adapter, err)
		}
		var places []contract.PlacementClass
		for _, ap := range p.AcceptablePlacements {
			places = append(places, ap.Placement)
			if ap.Requirement != contract.RequirementRequired {
				t.Errorf("%s: %s is %s", tc.adapter, ap.Placement, ap.Requirement)
			}
		}
		if p.PayloadKind != NoteKind || p.Format != tc.format || p.ByteSize != uint64(len(body)) ||
			*p.ContentDigest != contract.Digest([]byte(body)) || *p.Body != body || !slices.Equal(places, tc.places) {
			t.Errorf("%s: %+v places %v", tc.adapter, p, places)
		}
	}
	for _, bad := range [][]byte{nil, {0xff, 0xfe}, []byte("a\x00b")} {
		if _, err := notePayload(bad, "n.md", contract.AdapterManifest{}, "pay_x"); err == nil {
			t.Errorf("note %q accepted", bad)
		}
	}
}
