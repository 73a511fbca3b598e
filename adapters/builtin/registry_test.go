package builtin

import (
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/schema"
)

func TestDefaultRegistry(t *testing.T) {
	r := Default()
	wantIDs := []string{"claude", "codex", "gemini", "opencode", "pi", "hermes", "openclaw", "copilot", "qwen", "generic"}
	if got := r.IDs(); !slices.Equal(got, wantIDs) {
		t.Fatalf("IDs() = %q, want %q", got, wantIDs)
	}
	seen := map[string]string{}
	for _, a := range r.All() {
		for _, n := range append([]string{a.ID}, a.Aliases...) {
			if prev, dup := seen[n]; dup {
				t.Errorf("name %q used by %q and %q", n, prev, a.ID)
			}
			seen[n] = a.ID
		}
	}
	wantV1 := map[string]bool{"claude": true, "codex": true, "gemini": true, "opencode": true, "pi": true, "openclaw": true, "copilot": true, "qwen": true}
	for _, a := range r.All() {
		t.Run(a.ID, func(t *testing.T) {
			want := adapters.ConformancePre
			if wantV1[a.ID] {
				want = adapters.ConformanceV1
			}
			if a.Conformance != want {
				t.Errorf("Conformance = %q, want %q", a.Conformance, want)
			}
			if a.DisplayName == "" {
				t.Error("empty DisplayName")
			}
		})
	}
}

func TestManifests(t *testing.T) {
	for _, a := range Default().All() {
		t.Run(a.ID, func(t *testing.T) {
			m := a.Manifest()
			if err := m.Validate(); err != nil {
				t.Errorf("manifest does not validate: %v", err)
			}
			if m.AdapterID != a.ID {
				t.Errorf("adapter_id = %q, want %q", m.AdapterID, a.ID)
			}
			if m.ContractVersion != "lifeloop.v0.2" {
				t.Errorf("contract_version = %q", m.ContractVersion)
			}
			if m.DisplayName != a.DisplayName {
				t.Errorf("display_name = %q, want %q", m.DisplayName, a.DisplayName)
			}
			if !slices.Contains(m.IntegrationModes, contract.ModeLauncherWrapper) {
				t.Errorf("integration_modes = %q, want launcher_wrapper among them", m.IntegrationModes)
			}
			for _, e := range contract.Events {
				s, ok := m.LifecycleEvents[e]
				if !ok {
					t.Errorf("lifecycle_events lacks %s", e)
					continue
				}
				if s.Support != contract.SupportUnavailable && len(s.Modes) == 0 {
					t.Errorf("lifecycle_events.%s is %s with no modes", e, s.Support)
				}
				for _, mode := range s.Modes {
					if !slices.Contains(m.IntegrationModes, mode) {
						t.Errorf("lifecycle_events.%s names mode %s missing from integration_modes", e, mode)
					}
				}
			}
			for _, p := range contract.ManifestPlacementClasses {
				if _, ok := m.Placement[p]; !ok {
					t.Errorf("placement lacks %s", p)
				}
			}
			// Round trip through JSON unchanged.
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate("adapter_manifest", b); err != nil {
				t.Errorf("manifest does not satisfy the JSON Schema: %v", err)
			}
			back, err := contract.DecodeManifest(b)
			if err != nil {
				t.Fatalf("manifest does not decode strictly: %v\n%s", err, b)
			}
			b2, _ := json.Marshal(back)
			if string(b) != string(b2) {
				t.Errorf("round trip changed the manifest:\n%s\n%s", b, b2)
			}
		})
	}
}

// TestManifestIsFresh proves callers can modify a manifest without
// affecting the registry.
func TestManifestIsFresh(t *testing.T) {
	a, err := Default().Lookup("codex")
	if err != nil {
		t.Fatal(err)
	}
	m := a.Manifest()
	evidence := *m.ContextPressure.Evidence
	m.IntegrationModes[0] = contract.ModeNativeHook
	m.LifecycleEvents[contract.EventReceiptGapDetected] = contract.EventSupport{Support: contract.SupportNative}
	*m.ContextPressure.Evidence = "changed"
	m2 := a.Manifest()
	if m2.IntegrationModes[0] != contract.ModeLauncherWrapper ||
		m2.LifecycleEvents[contract.EventReceiptGapDetected].Support != contract.SupportUnavailable ||
		*m2.ContextPressure.Evidence != evidence {
		t.Errorf("Manifest() shares state between calls: %+v", m2)
	}
}

// TestManifestClaimsHaveEvidence is the registry's honesty check: every
// claim stronger than `unavailable` names, in Adapter.Evidence, a test
// function that exists in this repository, and no evidence entry is left
// for a claim that is unavailable.
func TestManifestClaimsHaveEvidence(t *testing.T) {
	tests := repoTestNames(t)
	for _, a := range Default().All() {
		t.Run(a.ID, func(t *testing.T) {
			for _, p := range evidenceProblems(a, tests) {
				t.Error(p)
			}
		})
	}
}

// TestEvidenceProblemsDetects proves the honesty check fails when it
// should.
func TestEvidenceProblemsDetects(t *testing.T) {
	raised := func() contract.AdapterManifest {
		m := adapters.WrapperManifest("x", "X", contract.RoleWorker)
		m.LifecycleEvents[contract.EventFrameOpening] = contract.EventSupport{
			Support: contract.SupportNative, Modes: []contract.IntegrationMode{contract.ModeLauncherWrapper},
		}
		m.Placement[contract.ManifestPreSession] = contract.PlacementSupport{Support: contract.SupportSynthesized}
		return m
	}
	// The shared wrapper claims are backed by wrapperEvidence; the cases
	// below add to it.
	tests := map[string]bool{"TestExists": true}
	for _, name := range adapters.WrapperEvidence() {
		tests[name] = true
	}
	cases := []struct {
		name     string
		manifest func() contract.AdapterManifest
		evidence map[string]string
		want     []string
	}{
		{"honest default", func() contract.AdapterManifest { return adapters.WrapperManifest("x", "X", contract.RoleWorker) }, nil, nil},
		{"raised without evidence", raised, nil, []string{
			`claim lifecycle_events.frame.opening/launcher_wrapper is native but Evidence names no test`,
			`claim placement.pre_session is synthesized but Evidence names no test`,
		}},
		{"evidence names a missing test", raised, map[string]string{
			"lifecycle_events.frame.opening/launcher_wrapper": "TestExists",
			"placement.pre_session":                           "TestMissing",
		}, []string{`claim placement.pre_session cites TestMissing, which no _test.go file defines`}},
		{"stale evidence", func() contract.AdapterManifest { return adapters.WrapperManifest("x", "X", contract.RoleWorker) },
			map[string]string{"context_pressure": "TestExists"},
			[]string{`Evidence for context_pressure, but the claim is unavailable or absent`}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			a := adapters.AdapterOf(fakeHarness{id: "x", manifest: tt.manifest, evidence: adapters.WithEvidence(tt.evidence)})
			if got := evidenceProblems(a, tests); !slices.Equal(got, tt.want) {
				t.Errorf("evidenceProblems() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// evidenceProblems lists, sorted, what is wrong with a's claim evidence
// given the set of test function names in the repository.
func evidenceProblems(a *adapters.Adapter, tests map[string]bool) []string {
	var out []string
	claims := adapters.Claims(a.Manifest())
	for key, s := range claims {
		if s == contract.SupportUnavailable {
			continue
		}
		name, ok := a.Evidence[key]
		switch {
		case !ok || name == "":
			out = append(out, "claim "+key+" is "+string(s)+" but Evidence names no test")
		case !tests[name]:
			out = append(out, "claim "+key+" cites "+name+", which no _test.go file defines")
		}
	}
	for key := range a.Evidence {
		if s, ok := claims[key]; !ok || s == contract.SupportUnavailable {
			out = append(out, "Evidence for "+key+", but the claim is unavailable or absent")
		}
	}
	sort.Strings(out)
	return out
}

// repoTestNames returns the names of every Test/Benchmark/Fuzz/Example
// function defined in a _test.go file of this module.
func repoTestNames(t *testing.T) map[string]bool {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found above the adapters/builtin package: %v", err)
	}
	re := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`)
	names := map[string]bool{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllSubmatch(b, -1) {
			names[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !names["TestManifestClaimsHaveEvidence"] {
		t.Fatal("test scan did not find this file's own tests")
	}
	return names
}

// TestOrgLoopHarness: each harness names itself in OrgLoop's vocabulary;
// the others are "other" (contract.ProjectOrgLoop's default).
func TestOrgLoopHarness(t *testing.T) {
	r := Default()
	for in, want := range map[string]string{
		"claude": "claude-code", "codex": "codex", "opencode": "opencode", "pi": "pi",
		"gemini": "other", "copilot": "other", "qwen": "other", "generic": "other", "claude-code": "claude-code",
	} {
		a, err := r.Lookup(in)
		if err != nil {
			t.Fatal(err)
		}
		got := a.OrgLoopHarness
		if got == "" {
			got = contract.HarnessOther
		}
		if got != want {
			t.Errorf("OrgLoopHarness(%q) = %q, want %q", in, got, want)
		}
		if !slices.Contains(contract.OrgLoopHarnesses, got) {
			t.Errorf("OrgLoopHarness(%q) = %q is not in OrgLoop's vocabulary", in, got)
		}
	}
}

// fakeHarness is a harness made of its parts, for registry tests.
type fakeHarness struct {
	id       string
	aliases  []string
	names    []string
	manifest func() contract.AdapterManifest
	evidence map[string]string
}

func (h fakeHarness) Describe() adapters.Description {
	return adapters.Description{ID: h.id, Aliases: h.aliases, DisplayName: h.id, Conformance: adapters.ConformancePre, Names: h.names}
}

func (h fakeHarness) Manifest() contract.AdapterManifest {
	if h.manifest == nil {
		return adapters.WrapperManifest(h.id, h.id, contract.RoleWorker)
	}
	return h.manifest()
}

func (h fakeHarness) Evidence() map[string]string { return h.evidence }

// TestHarnessPackagesAgree: harnesses/package.json (what `make harnesses`
// and `make harnesses-latest` install) pins each adapter's package (or
// its successor, when it moved) at its Pinned version, and its lifeloop.successors names the same successor
// packages as the adapters' version sources.
func TestHarnessPackagesAgree(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "harnesses", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
		Lifeloop     struct {
			Successors map[string]string `json:"successors"`
		} `json:"lifeloop"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	successors := map[string]string{}
	for _, a := range Default().All() {
		src, ok := a.VersionSource()
		if !ok || src.Package == "" {
			continue
		}
		for _, name := range []string{src.Package, src.Successor} {
			if v, ok := pkg.Dependencies[name]; ok && v != src.Pinned {
				t.Errorf("%s: harnesses/package.json pins %s %s, the adapter %s", a.ID, name, v, src.Pinned)
			}
		}
		if src.Successor != "" {
			successors[src.Package] = src.Successor
		}
	}
	if !maps.Equal(successors, pkg.Lifeloop.Successors) {
		t.Errorf("harnesses/package.json successors %v, the adapters' %v", pkg.Lifeloop.Successors, successors)
	}
}
