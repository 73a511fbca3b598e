package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// renewTimeout bounds one renew call: the wrapper stops the harness
// (signals with bounded grace each; nothing is typed) and starts it
// again before it answers.
const renewTimeout = 3 * time.Minute

// renewOptions are the flags of renew.
type renewOptions struct {
	controlOptions
	Payloads []string
	// Note is a text or markdown file ("-": standard input) renew wraps
	// into a continuation payload itself (notePayload).
	Note   string
	Fresh  bool
	Resume bool
	Reason string
	// DropUndelivered drops the payloads the relaunch cannot place.
	DropUndelivered bool
}

func renewCommand(e *env) *ucli.Command {
	var o renewOptions
	var r remoteOptions
	var payloads listValue
	return &ucli.Command{
		Name:      "renew",
		Usage:     "stop a running harness and start it again, delivering continuation payloads at the relaunch",
		ArgsUsage: "[--note FILE] [--payload FILE]... [--fresh|--resume] [--reason TEXT] SESSION|--latest",
		Description: "Asks the session's live `lifeloop run` to renew the harness: session.ending (reason\n" +
			"renewal), a stop by signal (the adapter's stop signal, then SIGTERM and SIGKILL; nothing is\n" +
			"typed, so an open permission dialog is never answered and a draft never sent), session.ended, and\n" +
			"a relaunch with the payloads placed at launch (as the adapter places them: an appended\n" +
			"system prompt, developer instructions, or the first prompt of a resumed thread), recorded by\n" +
			"session.starting/started with payload receipts. --fresh (the default) starts a new\n" +
			"harness conversation; --resume continues the same one. The payload files are checked\n" +
			"first; payloads are kept private in the session's continuation store until delivered.\n" +
			"renew answers once the relaunched harness takes keys. A relaunch that exits before that is a\n" +
			"failed renewal (adapter_unavailable, with its exit code): the payloads stay stored and the\n" +
			"harness is started again as the session launched it, so the session goes on.\n\n" +
			"--note FILE (or - for standard input) hands over plain text or markdown as it is: renew\n" +
			"wraps it into a continuation payload itself (kind handoff_note, its format, size and\n" +
			"digest, and the placements this session's harness can take at a relaunch), so\n" +
			"`lifeloop renew --latest --note handoff.md --resume` is all a person types. --payload\n" +
			"takes payload envelopes (JSON) as before.\n\n" +
			"One line per payload says what its receipt says. A stored payload the relaunch cannot place\n" +
			"(e.g. a resumed conversation that takes no instructions at launch) is not delivered: the\n" +
			"renewal ends undelivered and the payload stays stored, labelled, for a later renewal that\n" +
			"can place it (which names it as carried over), or is dropped with --drop-undelivered.\n\n" +
			"Exit status: 0 renewed with every payload delivered; 1 refused or failed, or a payload\n" +
			"was not delivered (the message starts with the failure\n" +
			"class, e.g. payload_too_large, capability_unsupported); 2 usage; 3 a payload file is\n" +
			"unreadable or not JSON.\n\n" +
			"A background session lifeloop records through a harness's process wrapper has no live\n" +
			"`lifeloop run`: its renewal goes through the harness's own commands (it is stopped, then\n" +
			"the same conversation resumed in the background with the --note as its prompt, which the\n" +
			"harness's transcript must show for the payload to count as delivered); it always resumes,\n" +
			"needs --note, and is recorded as a new session that `renewal status` names.\n\n" +
			"With --fleet URL --machine M the session runs on machine M: the renewal (fresh or\n" +
			"--resume, with the --note) goes to that machine's `lifeloop serve` (docs/fleet.md).",
		OnUsageError: commandUsageError,
		Flags: append(append(controlFlags(&o.controlOptions, true), r.flags()...),
			&ucli.StringFlag{Name: "note", Usage: "text or markdown `FILE` (or - for standard input) to hand to the relaunched harness; wrapped into a continuation payload", Destination: &o.Note},
			&ucli.GenericFlag{Name: "payload", Usage: "payload envelope JSON `FILE` (or - for standard input) to deliver at the relaunch (repeat for more)", Value: &payloads},
			&ucli.BoolFlag{Name: "fresh", Usage: "start a new harness conversation (default)", Destination: &o.Fresh},
			&ucli.BoolFlag{Name: "resume", Usage: "continue the same harness conversation", Destination: &o.Resume},
			&ucli.StringFlag{Name: "reason", Usage: "why (recorded in the renewal status and receipts)", Destination: &o.Reason},
			&ucli.BoolFlag{Name: "drop-undelivered", Usage: "drop stored payloads the relaunch cannot place (their receipts say so) instead of keeping them for a later renewal", Destination: &o.DropUndelivered},
		),
		Action: func(c *ucli.Context) error {
			if c.NArg() > 1 {
				return usageErrorf("renew takes one SESSION (got %q)", c.Args().Slice())
			}
			if o.Fresh && o.Resume {
				return usageErrorf("give --fresh or --resume, not both")
			}
			o.Session = c.Args().First()
			o.Payloads = payloads.items
			if o.Note == "-" && slices.Contains(o.Payloads, "-") {
				return usageErrorf("--note - and --payload - cannot both read standard input")
			}
			if r.URL != "" || r.Machine != "" {
				return remoteRenew(c.Context, e, r, o)
			}
			return renewRun(c.Context, e, o)
		},
	}
}

// readPayloadFile reads and decodes one payload envelope file ("-" is
// standard input).
func readPayloadFile(in io.Reader, name string) (contract.PayloadEnvelope, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(in)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return contract.PayloadEnvelope{}, exitf(exitcode.Unreadable, "payload file %s: %v", name, err)
	}
	if why := notJSON(data); why != "" {
		return contract.PayloadEnvelope{}, exitf(exitcode.Unreadable, "payload file %s %s", name, why)
	}
	p, err := contract.DecodePayloadEnvelope(data)
	if err != nil {
		return contract.PayloadEnvelope{}, exitf(exitcode.Failed, "%s: payload file %s: %v", contract.FailureInvalidRequest, name, err)
	}
	return p, nil
}

// classError prints a renewal failure as "<class>: message (retry: <retry class>)".
func classError(err error) error {
	var re *renewal.Error
	if errors.As(err, &re) {
		return exitf(exitcode.Failed, "%s (retry: %s)", re.Error(), re.Retry())
	}
	return exitf(exitcode.Failed, "%v", err)
}

func renewRun(ctx context.Context, e *env, o renewOptions) error {
	root, rec, err := resolveSession(e, o.controlOptions)
	if err != nil {
		return err
	}
	out, err := renewSession(ctx, e, root, rec, o)
	if err != nil {
		return err
	}
	if o.JSON {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintln(e.Out, string(b))
		return nil
	}
	fmt.Fprintln(e.Out, renewOutcomeLine(rec.ID, out))
	for _, line := range payloadLines(out) {
		fmt.Fprintln(e.Out, line)
	}
	if out.State != renewal.StateDelivered {
		if len(out.UndeliveredIDs) > 0 {
			fmt.Fprintf(e.Err, "lifeloop: %s: payloads %s were not delivered at this relaunch%s\n", contract.FailurePlacementUnavailable, strings.Join(out.UndeliveredIDs, ", "), undeliveredHint(rec.ID, out))
		}
		return silentExit(exitcode.Failed)
	}
	return nil
}

// payloadLines are renew's lines for a person, one per payload receipt:
// what the receipt says, and for a payload not delivered what became of
// it.
func payloadLines(out renewal.Outcome) []string {
	var lines []string
	for _, r := range out.PayloadReceipts {
		line := fmt.Sprintf("  %s: %s", r.PayloadID, r.Status)
		if r.Placement != "" {
			line += " (payload placement " + string(r.Placement)
			if out.Placement != "" && (r.Status == contract.PlacementOutcomeDelivered || r.Status == contract.PlacementOutcomeDegraded) {
				line += " via manifest placement " + string(out.Placement)
			}
			line += ")"
		}
		switch {
		case slices.Contains(out.UndeliveredIDs, r.PayloadID) && out.DroppedUndelivered:
			line += ": not delivered, dropped"
		case slices.Contains(out.UndeliveredIDs, r.PayloadID):
			line += ": not delivered, kept for a later renewal that can place it"
		case slices.Contains(out.CarriedIDs, r.PayloadID):
			line += ": left undelivered by an earlier renewal, delivered into this conversation"
		}
		lines = append(lines, line)
	}
	return lines
}

// undeliveredHint says what to do about kept payloads.
func undeliveredHint(id string, out renewal.Outcome) string {
	if out.DroppedUndelivered {
		return " and were dropped"
	}
	return fmt.Sprintf("; they stay stored for a later renewal (`lifeloop continuation list %s`; `lifeloop continuation drop %s ID` discards one, `renew --drop-undelivered` drops them)", id, id)
}

// renewOutcomeLine is the one line renew prints about its outcome.
func renewOutcomeLine(id string, out renewal.Outcome) string {
	mode := "fresh"
	if out.Resumed {
		mode = "resumed"
	}
	line := fmt.Sprintf("%s: renewal %s (attempt %d, %s, %d payload receipts", id, out.State, out.Attempt, mode, len(out.PayloadReceipts))
	if out.Placement != "" {
		line += fmt.Sprintf(", placed at launch: manifest placement %s", out.Placement)
	}
	if out.ContinuedIn != "" {
		line += fmt.Sprintf(", as the prompt of the resumed session; continued in session %s", out.ContinuedIn)
	}
	return line + ")"
}

// renewSession checks the payload files of o and asks the live wrapper of
// rec to renew it. The command and `lifeloop top` both use it.
func renewSession(ctx context.Context, e *env, root string, rec statedir.SessionRecord, o renewOptions) (renewal.Outcome, error) {
	store := &renewal.Store{Dir: statedir.ContinuationPath(root, rec.ID), Now: e.Now}
	req := renewal.Request{Resume: o.Resume, Reason: o.Reason, DropUndelivered: o.DropUndelivered}
	if o.Note != "" {
		p, err := readNote(e, rec, o.Note)
		if err != nil {
			return renewal.Outcome{}, err
		}
		if err := store.Validate(p); err != nil {
			return renewal.Outcome{}, classError(err)
		}
		req.Payloads = append(req.Payloads, p)
	}
	for _, name := range o.Payloads {
		p, err := readPayloadFile(e.In, name)
		if err != nil {
			return renewal.Outcome{}, err
		}
		if err := store.Validate(p); err != nil {
			return renewal.Outcome{}, classError(err)
		}
		req.Payloads = append(req.Payloads, p)
	}
	if rec.State.IsTerminal() {
		return renewal.Outcome{}, exitf(exitcode.Failed, "session %s already ended (%s); renew needs a running `lifeloop run`", rec.ID, rec.State)
	}
	if ad := backgroundRenewer(e, rec); ad != nil {
		return renewBackground(ctx, e, root, rec, ad, req, o.Fresh)
	}
	cctx, cancel := context.WithTimeout(ctx, renewTimeout)
	defer cancel()
	var out renewal.Outcome
	if err := control.Call(cctx, control.SocketFor(root, rec.ID), control.OpRenew, req, &out); err != nil {
		if errors.Is(err, control.ErrNotLive) {
			return out, exitf(exitcode.Failed, "session %s has no live wrapper (its lifeloop run is gone); restart it with `lifeloop run`", rec.ID)
		}
		return out, exitf(exitcode.Failed, "renew %s: %v", rec.ID, err)
	}
	return out, nil
}

func renewalCommand(e *env) *ucli.Command {
	var o controlOptions
	return &ucli.Command{
		Name:            "renewal",
		Usage:           "inspect a session's renewals",
		HideHelpCommand: true,
		Subcommands: []*ucli.Command{{
			Name:         "status",
			Usage:        "show the state of a session's latest renewal (never the payloads)",
			ArgsUsage:    "SESSION|--latest",
			OnUsageError: commandUsageError,
			Flags:        controlFlags(&o, true),
			Action: func(c *ucli.Context) error {
				if c.NArg() > 1 {
					return usageErrorf("renewal status takes one SESSION (got %q)", c.Args().Slice())
				}
				o.Session = c.Args().First()
				return renewalStatusRun(e, o)
			},
		}},
	}
}

func renewalStatusRun(e *env, o controlOptions) error {
	root, rec, err := resolveSession(e, o)
	if err != nil {
		return err
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(root, rec.ID)))
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	if o.JSON {
		b, _ := json.MarshalIndent(st, "", "  ")
		fmt.Fprintln(e.Out, string(b))
		return nil
	}
	fmt.Fprintf(e.Out, "session   %s\nrenewal   %s\nattempt   %d\n", rec.ID, st.State, st.Attempt)
	if st.State == renewal.StateNotAttempted {
		return nil
	}
	mode := "fresh"
	if st.Resume {
		mode = "resume"
	}
	fmt.Fprintf(e.Out, "mode      %s\npending   %v\n", mode, st.PayloadPending)
	if len(st.PayloadIDs) > 0 {
		fmt.Fprintf(e.Out, "payloads  %s\n", strings.Join(st.PayloadIDs, " "))
	}
	if len(st.UndeliveredIDs) > 0 {
		fate := "kept"
		if st.DropUndelivered {
			fate = "dropped"
		}
		fmt.Fprintf(e.Out, "%-10s%s (not delivered)\n", fate, strings.Join(st.UndeliveredIDs, " "))
	}
	if len(st.CarriedIDs) > 0 {
		fmt.Fprintf(e.Out, "carried   %s (left undelivered by an earlier renewal)\n", strings.Join(st.CarriedIDs, " "))
	}
	if st.Placement != "" {
		fmt.Fprintf(e.Out, "placement %s (manifest placement, at launch)\n", st.Placement)
	}
	if st.ContinuedIn != "" {
		fmt.Fprintf(e.Out, "continued %s (the session that records the resumed harness session)\n", st.ContinuedIn)
	}
	if st.Reason != "" {
		fmt.Fprintf(e.Out, "reason    %s\n", st.Reason)
	}
	if st.StartedAt != nil {
		fmt.Fprintf(e.Out, "started   %s\n", st.StartedAt.Format(time.RFC3339))
	}
	if st.FinishedAt != nil {
		fmt.Fprintf(e.Out, "finished  %s\n", st.FinishedAt.Format(time.RFC3339))
	}
	if le := st.LastError; le != nil {
		fmt.Fprintf(e.Out, "error     %s (retry: %s) at %s: %s\n", le.FailureClass, le.RetryClass, le.At.Format(time.RFC3339), le.Message)
	}
	return nil
}

// NoteKind is the payload_kind of a note given to `renew --note`.
const NoteKind = "handoff_note"

// readNote reads the note file name ("-": standard input) and wraps it
// into the continuation payload of session rec (notePayload).
func readNote(e *env, rec statedir.SessionRecord, name string) (contract.PayloadEnvelope, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(e.In)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return contract.PayloadEnvelope{}, exitf(exitcode.Unreadable, "note %s: %v", name, err)
	}
	var m contract.AdapterManifest
	if a, lerr := e.Registry().Lookup(rec.AdapterID); lerr == nil {
		m = a.Manifest()
	}
	p, err := notePayload(data, name, m, e.IDs.New("pay"))
	if err != nil {
		return contract.PayloadEnvelope{}, exitf(exitcode.Unreadable, "note %s: %v", name, err)
	}
	return p, nil
}

// notePayload wraps a text or markdown note into a continuation payload:
// kind handoff_note, format text/markdown for a .md or .markdown file
// (else text/plain), utf8 body with its byte size and digest, and as
// acceptable placements (each required) the payload placements the
// adapter's manifest m can carry at a launch: pre_prompt_frame when it
// claims pre_session or pre_frame_leading (a fresh launch or a resumed
// conversation's first prompt), then developer_equivalent_frame when it
// claims pre_session; pre_prompt_frame alone when it claims neither (the
// relaunch then says why it cannot place it).
func notePayload(data []byte, name string, m contract.AdapterManifest, id string) (contract.PayloadEnvelope, error) {
	if len(data) == 0 {
		return contract.PayloadEnvelope{}, errors.New("is empty")
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		return contract.PayloadEnvelope{}, errors.New("is not text (give plain text or markdown; --payload takes payload envelopes)")
	}
	format := "text/plain"
	switch strings.ToLower(filepath.Ext(name)) {
	case ".md", ".markdown":
		format = "text/markdown"
	}
	usable := func(c contract.ManifestPlacementClass) bool {
		switch m.Placement[c].Support {
		case contract.SupportNative, contract.SupportSynthesized, contract.SupportPartial:
			return true
		}
		return false
	}
	req := func(pc contract.PlacementClass) contract.AcceptablePlacement {
		return contract.AcceptablePlacement{Placement: pc, Requirement: contract.RequirementRequired}
	}
	places := []contract.AcceptablePlacement{req(contract.PlacementPrePromptFrame)}
	if usable(contract.ManifestPreSession) {
		places = append(places, req(contract.PlacementDeveloperEquivalentFrame))
	}
	body := string(data)
	return contract.PayloadEnvelope{
		SchemaVersion:        contract.SchemaVersion(contract.Version),
		PayloadID:            id,
		ClientID:             "lifeloop-operator",
		PayloadKind:          NoteKind,
		Format:               format,
		ContentEncoding:      contract.EncodingUTF8,
		Body:                 &body,
		ByteSize:             uint64(len(data)),
		ContentDigest:        contract.Ptr(contract.Digest(data)),
		AcceptablePlacements: places,
	}, nil
}
