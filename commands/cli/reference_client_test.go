package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/internal/refclient"
)

// Payload files in both schema_version forms: the contract version string
// (what the reference writes) and the integer 1 of the contract text's
// example.
const (
	refPayloadString = `{"schema_version":"lifeloop.v0.2","payload_id":"pay_str","client_id":"ref","payload_kind":"note","format":"text/plain","content_encoding":"utf8","body":"hello","byte_size":5,"acceptable_placements":[{"placement":"receipt_only","requirement":"optional"}]}`
	refPayloadLegacy = `{"schema_version":1,"payload_id":"pay_int","client_id":"ref","payload_kind":"note","format":"text/plain","content_encoding":"utf8","body":"hello","byte_size":5,"acceptable_placements":[{"placement":"receipt_only","requirement":"optional"}]}`
)

// TestReferenceClientReadsEveryDocument runs lifeloop's commands and
// decodes every document they write with the reference-typed strict
// decoder (internal/refclient): receipts printed by emit and event invoke,
// the ledger lines and what `receipts` prints, the dispatch envelope a
// client receives on stdin (request and payload envelopes, payloads given
// in either schema_version form), and every adapter's manifest.
func TestReferenceClientReadsEveryDocument(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	str := write("pay_str.json", refPayloadString, 0o600)
	legacy := write("pay_int.json", refPayloadLegacy, 0o600)
	seen := filepath.Join(dir, "seen-envelope.json")
	client := write("capture.sh", "#!/bin/sh\ncat > '"+seen+"'\necho '{\"schema_version\":\"lifeloop.v0.2\",\"status\":\"delivered\",\"failure_class\":null,\"retry_class\":null}'\n", 0o700)
	env := []string{"HOME=" + dir, "LIFELOOP_STATE_DIR=" + state, "PATH=" + os.Getenv("PATH")}
	run := func(stdin string, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		code := Main(append([]string{"lifeloop"}, args...), Streams{
			In: strings.NewReader(stdin), Out: &out, Err: &errOut, Environ: env, Dir: dir,
		})
		if code != 0 {
			t.Fatalf("lifeloop %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		return out.String()
	}
	decode := func(what string, doc []byte, dst any) {
		t.Helper()
		if err := refclient.Decode(doc, dst); err != nil {
			t.Errorf("%s: a reference client cannot read it: %v\n%s", what, err, doc)
		}
	}

	var r refclient.LifecycleReceipt
	decode("emit's receipt", []byte(run("", "emit", "session.started", "--session", "s1", "--adapter", "codex", "--payload", str, "--payload", legacy)), &r)
	if len(r.PayloadReceipts) != 2 {
		t.Errorf("emit's receipt has %d payload receipts, want 2 (one per payload file form)", len(r.PayloadReceipts))
	}

	envelope := `{"schema_version":"lifeloop.v0.2","request":{"schema_version":"lifeloop.v0.2","event":"session.started","event_id":"evt_ref_1","adapter_id":"codex","adapter_version":"0.1.0","integration_mode":"native_hook","invocation_id":"inv_ref_1"},"payloads":[` + refPayloadString + `,` + refPayloadLegacy + `]}`
	decode("event invoke's receipt", []byte(run(envelope, "event", "invoke", "--client", client, "--session", "s1")), &r)
	data, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	var d refclient.DispatchEnvelope
	decode("the dispatch envelope a client reads", data, &d)
	if len(d.Payloads) != 2 {
		t.Errorf("the client got %d payloads, want 2", len(d.Payloads))
	}

	lines := 0
	for what, text := range map[string]string{
		"a ledger line":              mustRead(t, filepath.Join(state, "sessions", "s1", "receipts.jsonl")),
		"a line of receipts' NDJSON": run("", "receipts", "s1"),
	} {
		sc := bufio.NewScanner(strings.NewReader(text))
		for sc.Scan() {
			lines++
			decode(what, sc.Bytes(), &refclient.LifecycleReceipt{})
		}
	}
	if lines < 4 {
		t.Errorf("read %d receipt lines, want at least 4", lines)
	}

	// run: the receipts it writes to an --events sink and the dispatch
	// envelope of every receipt its --client receives.
	envDir := filepath.Join(dir, "run-envelopes")
	if err := os.Mkdir(envDir, 0o700); err != nil {
		t.Fatal(err)
	}
	sinkPath := filepath.Join(dir, "events.jsonl")
	runClient := "cat > \"$(mktemp -p '" + envDir + "')\"; echo '{\"schema_version\":\"lifeloop.v0.2\",\"status\":\"observed\"}'"
	run("", "run", "--tick", "0", "--events", sinkPath, "--client", runClient, "--", "sh", "-c", "exit 0")
	sc := bufio.NewScanner(strings.NewReader(mustRead(t, sinkPath)))
	sinkLines := 0
	for sc.Scan() {
		sinkLines++
		decode("a receipt written to an --events sink", sc.Bytes(), &refclient.LifecycleReceipt{})
	}
	envelopes, err := filepath.Glob(filepath.Join(envDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range envelopes {
		decode("a dispatch envelope run's --client read", []byte(mustRead(t, f)), &refclient.DispatchEnvelope{})
	}
	if sinkLines < 3 || len(envelopes) < 3 {
		t.Errorf("run wrote %d sink lines and %d client envelopes; want at least 3 of each", sinkLines, len(envelopes))
	}

	for _, a := range builtin.Default().All() {
		decode("manifest "+a.ID, []byte(run("", "manifest", a.ID)), &refclient.AdapterManifest{})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
