package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
)

// negotiateOptions are the inputs of `lifeloop negotiate`.
type negotiateOptions struct {
	AdapterID string
	Mode      string
	// Require is a file path, or "-" for In.
	Require  string
	In       io.Reader
	Out      io.Writer
	Registry *adapters.Registry
}

func negotiateCommand(e *env) *ucli.Command {
	var opts negotiateOptions
	return &ucli.Command{
		Name:  "negotiate",
		Usage: "negotiate a client's capability request against an adapter's manifest",
		Description: "Reads a capability request (JSON: client_id and the events, placements,\n" +
			"context_pressure, receipt_ledger, session_identity and renewal it needs, each with a\n" +
			"level of required, preferred or optional) and evaluates it against the adapter's\n" +
			"manifest for one integration mode. Prints the negotiation result as JSON.\n\n" +
			"Exit status: 0 dispatch may proceed (possibly degraded, with warnings);\n" +
			"1 refused (a required capability is unsupported or needs an operator) or the request\n" +
			"is invalid; 2 usage; 3 the request file is unreadable or not JSON.\n\n" +
			"Example request:\n" +
			`  {"client_id": "my-client", "events": {"session.started": {"level": "required"}}}`,
		ArgsUsage:    " ",
		OnUsageError: commandUsageError,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "adapter", Usage: "adapter `ID` or alias (see lifeloop adapters)", Destination: &opts.AdapterID},
			&ucli.StringFlag{Name: "mode", Value: string(contract.ModeLauncherWrapper), Usage: "integration `MODE` to negotiate for: " + modeList(), Destination: &opts.Mode},
			&ucli.StringFlag{Name: "require", Usage: "capability request `FILE`, or - for standard input", Destination: &opts.Require},
		},
		Action: func(c *ucli.Context) error {
			if c.NArg() > 0 {
				return usageErrorf("negotiate takes no arguments, got %q (see --help)", c.Args().First())
			}
			if opts.AdapterID == "" {
				return usageErrorf("negotiate needs --adapter ID (see `lifeloop adapters`)")
			}
			if opts.Require == "" {
				return usageErrorf("negotiate needs --require FILE (or - for standard input)")
			}
			opts.In, opts.Out, opts.Registry = e.In, e.Out, e.Registry()
			return negotiateRun(e.ctx, opts)
		},
	}
}

// negotiateRun decodes the request, negotiates and prints the result.
func negotiateRun(_ context.Context, opts negotiateOptions) error {
	mode := contract.IntegrationMode(opts.Mode)
	if !mode.Valid() {
		return usageErrorf("unknown --mode %q; known: %s", opts.Mode, modeList())
	}
	a, err := lookupAdapter(opts.Registry, opts.AdapterID)
	if err != nil {
		return err
	}
	data, err := readInput(opts.Require, opts.In)
	if err != nil {
		return err
	}
	if why := notJSON(data); why != "" {
		return exitf(exitcode.Unreadable, "%s %s; give a capability request object (see `lifeloop negotiate --help`)", inputName(opts.Require), why)
	}
	req, err := contract.DecodeCapabilityRequest(data)
	if err != nil {
		return exitf(exitcode.Failed, "invalid capability request in %s: %v", inputName(opts.Require), err)
	}
	res := contract.Negotiate(a.Manifest(), mode, req)
	if err := writeIndentedJSON(opts.Out, res); err != nil {
		return err
	}
	if !res.Verdict.Proceed {
		class := "refused"
		if res.Verdict.FailureClass != nil {
			class = string(*res.Verdict.FailureClass)
		}
		return exitf(exitcode.Failed, "negotiation refused (%s): %s", class, strings.Join(res.Verdict.Reasons, "; "))
	}
	return nil
}

// readInput reads a file, or stdin for "-". A failure is an
// exitcode.Unreadable error that says what to do.
func readInput(name string, stdin io.Reader) ([]byte, error) {
	var (
		data []byte
		err  error
	)
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, exitf(exitcode.Unreadable, "cannot read %s: %v; check the path and permissions", inputName(name), unwrapPathError(err))
	}
	return data, nil
}

// unwrapPathError drops the path from an *os.PathError, which the caller
// already names.
func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// inputName is how messages name an input: its path, or "standard input".
func inputName(name string) string {
	if name == "-" {
		return "standard input"
	}
	return name
}

// modeList is the comma-separated list of integration modes.
func modeList() string {
	s := make([]string, len(contract.IntegrationModes))
	for i, m := range contract.IntegrationModes {
		s[i] = string(m)
	}
	slices.Sort(s)
	return strings.Join(s, ", ")
}
