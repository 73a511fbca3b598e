package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	ucli "github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// commandUsageError makes a command's flag errors usage errors (exit 2)
// with a one-line hint, instead of urfave's help dump on stdout.
func commandUsageError(_ *ucli.Context, err error, _ bool) error {
	return usageErrorf("%v (see --help)", err)
}

// writeIndentedJSON writes v as two-space indented JSON and a newline.
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// lookupAdapter finds an adapter by id or alias; an unknown id is a usage
// error that lists the known ids.
func lookupAdapter(reg *adapters.Registry, id string) (*adapters.Adapter, error) {
	a, err := reg.Lookup(id)
	if err != nil {
		return nil, usageErrorf("%v (run `lifeloop adapters` for the list)", err)
	}
	return a, nil
}

// ---- lifeloop adapters ----

// adaptersOptions are the inputs of `lifeloop adapters`.
type adaptersOptions struct {
	JSON     bool
	Out      io.Writer
	Registry *adapters.Registry
}

// adapterListing is one row of `lifeloop adapters --json`.
type adapterListing struct {
	ID               string                     `json:"id"`
	Aliases          []string                   `json:"aliases"`
	DisplayName      string                     `json:"display_name"`
	Conformance      adapters.Conformance       `json:"conformance"`
	AdapterVersion   string                     `json:"adapter_version"`
	ContractVersion  string                     `json:"contract_version"`
	Role             contract.AdapterRole       `json:"role"`
	IntegrationModes []contract.IntegrationMode `json:"integration_modes"`
	StopSignal       string                     `json:"stop_signal,omitempty"`
	TelemetryKind    string                     `json:"telemetry_kind,omitempty"`
}

func adaptersCommand(e *env) *ucli.Command {
	var opts adaptersOptions
	return &ucli.Command{
		Name:  "adapters",
		Usage: "list the harness adapters lifeloop knows",
		Description: "Lists every built-in adapter: its id (what --adapter and `lifeloop manifest` take),\n" +
			"aliases, display name, conformance level (v1_conformance: every claim is backed by a test;\n" +
			"pre_conformance: not yet verified end to end) and integration modes.\n" +
			"Commands no adapter recognises use the generic adapter.",
		ArgsUsage:    " ",
		OnUsageError: commandUsageError,
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "print a JSON array instead of a table", Destination: &opts.JSON},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("adapters takes no arguments, got %q (see --help)", c.Args().First())
			}
			opts.Out = e.Out
			opts.Registry = e.Registry()
			return adaptersRun(e.ctx, opts)
		},
	}
}

// adaptersRun prints the registry as a table or JSON.
func adaptersRun(_ context.Context, opts adaptersOptions) error {
	var rows []adapterListing
	for _, a := range opts.Registry.All() {
		m := a.Manifest()
		aliases := a.Aliases
		if aliases == nil {
			aliases = []string{}
		}
		rows = append(rows, adapterListing{
			ID: a.ID, Aliases: aliases, DisplayName: a.DisplayName, Conformance: a.Conformance,
			AdapterVersion: m.AdapterVersion, ContractVersion: m.ContractVersion, Role: m.Role,
			IntegrationModes: m.IntegrationModes, StopSignal: stopSignal(a), TelemetryKind: telemetryKind(a),
		})
	}
	if opts.JSON {
		return writeIndentedJSON(opts.Out, rows)
	}
	tw := tabwriter.NewWriter(opts.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tALIASES\tNAME\tCONFORMANCE\tMODES")
	for _, r := range rows {
		aliases := strings.Join(r.Aliases, ",")
		if aliases == "" {
			aliases = "-"
		}
		modes := make([]string, len(r.IntegrationModes))
		for i, m := range r.IntegrationModes {
			modes[i] = string(m)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, aliases, r.DisplayName, r.Conformance, strings.Join(modes, ","))
	}
	return tw.Flush()
}

// ---- lifeloop manifest ----

// manifestOptions are the inputs of `lifeloop manifest`.
type manifestOptions struct {
	AdapterID string
	Out       io.Writer
	Registry  *adapters.Registry
}

func manifestCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "manifest",
		Usage: "print an adapter's manifest as JSON",
		Description: "Prints the adapter manifest (contract lifeloop.v0.2) for ID, an adapter id or alias\n" +
			"from `lifeloop adapters`. The manifest states what lifeloop provides for that harness;\n" +
			"a claim is `unavailable` until a test in this repository proves it.",
		ArgsUsage:    "ID",
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() != 1 {
				return usageErrorf("manifest takes exactly one adapter id, e.g. `lifeloop manifest generic` (see --help)")
			}
			return manifestRun(e.ctx, manifestOptions{AdapterID: c.Args().First(), Out: e.Out, Registry: e.Registry()})
		},
	}
}

// manifestRun prints one adapter's manifest.
func manifestRun(_ context.Context, opts manifestOptions) error {
	a, err := lookupAdapter(opts.Registry, opts.AdapterID)
	if err != nil {
		return err
	}
	return writeIndentedJSON(opts.Out, a.Manifest())
}

// ---- lifeloop events ----

// eventsOptions are the inputs of `lifeloop events`.
type eventsOptions struct {
	Out io.Writer
}

func eventsCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "events",
		Usage: "print the lifecycle event vocabulary as a JSON array",
		Description: "Prints every lifecycle event name of contract lifeloop.v0.2, in contract order,\n" +
			"as a JSON array of strings.",
		ArgsUsage:    " ",
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("events takes no arguments, got %q (see --help)", c.Args().First())
			}
			return eventsRun(e.ctx, eventsOptions{Out: e.Out})
		},
	}
}

// eventsRun prints the event vocabulary.
func eventsRun(_ context.Context, opts eventsOptions) error {
	return writeIndentedJSON(opts.Out, contract.Events)
}

// telemetryKind names the session-file format lifeloop reads for a: its
// own id when it has telemetry, else "".
// stopSignal names the signal a renewal stops a's harness with, or "".
func stopSignal(a *adapters.Adapter) string {
	sig, ok := a.StopSignal()
	if !ok {
		return ""
	}
	return unix.SignalName(sig)
}

func telemetryKind(a *adapters.Adapter) string {
	if a.Telemetry() == nil {
		return ""
	}
	return a.ID
}
