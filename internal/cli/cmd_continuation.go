package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// continuationOptions are the flags of the continuation subcommands.
type continuationOptions struct {
	StateDir string
	JSON     bool
}

func continuationCommand(e *env) *ucli.Command {
	var o continuationOptions
	sub := func(name, args, usage string, nargs int, withJSON bool, run func(store *renewal.Store, session string, args []string) error) *ucli.Command {
		flags := []ucli.Flag{stateDirFlag(&o.StateDir)}
		if withJSON {
			flags = append(flags, &ucli.BoolFlag{Name: "json", Usage: "print JSON", Destination: &o.JSON})
		}
		return &ucli.Command{
			Name: name, ArgsUsage: args, Usage: usage, Flags: flags, OnUsageError: commandUsageError,
			Action: func(c *ucli.Context) error {
				if c.NArg() != nargs {
					return usageErrorf("continuation %s takes %s, got %d arguments", name, args, c.NArg())
				}
				store, err := continuationStore(e, o, c.Args().First())
				if err != nil {
					return err
				}
				return run(store, c.Args().First(), c.Args().Tail())
			},
		}
	}
	return &ucli.Command{
		Name:            "continuation",
		Usage:           "manage a session's continuation payloads (delivered at its next renewal)",
		HideHelpCommand: true,
		Subcommands: []*ucli.Command{
			sub("put", "SESSION FILE", "store a payload envelope (FILE, or - for standard input) for the next renewal", 2, false,
				func(store *renewal.Store, session string, args []string) error {
					p, err := readPayloadFile(e.In, args[0])
					if err != nil {
						return err
					}
					ent, err := store.Put(p)
					if err != nil {
						return classError(err)
					}
					fmt.Fprintf(e.Out, "%s: stored %s (%d bytes, %s, expires %s)\n", session, ent.PayloadID, ent.ByteSize, ent.Digest, ent.Expires.Format(time.RFC3339))
					return nil
				}),
			sub("get", "SESSION PAYLOAD_ID", "print a stored payload's body (base64 bodies decoded; a body_ref is printed as is)", 2, true,
				func(store *renewal.Store, session string, args []string) error {
					p, err := store.Get(args[0])
					if errors.Is(err, renewal.ErrNotFound) {
						return exitf(exitcode.Failed, "session %s has no continuation payload %q; see `lifeloop continuation list %s`", session, args[0], session)
					}
					if err != nil {
						return classError(err)
					}
					if o.JSON {
						return writeIndentedJSON(e.Out, p)
					}
					if p.Body == nil {
						fmt.Fprintln(e.Out, *p.BodyRef)
						return nil
					}
					body, err := p.DecodedBody()
					if err != nil {
						return exitf(exitcode.Failed, "%v", err)
					}
					_, err = e.Out.Write(body)
					return err
				}),
			sub("drop", "SESSION PAYLOAD_ID", "remove a stored payload", 2, false,
				func(store *renewal.Store, session string, args []string) error {
					if err := store.Drop(args[0]); err != nil {
						if errors.Is(err, renewal.ErrNotFound) {
							return exitf(exitcode.Failed, "session %s has no continuation payload %q; see `lifeloop continuation list %s`", session, args[0], session)
						}
						return exitf(exitcode.Failed, "%v", err)
					}
					fmt.Fprintf(e.Out, "%s: dropped %s\n", session, args[0])
					return nil
				}),
			sub("list", "SESSION", "list stored payloads: id, kind, size, digest, created, expires (never bodies)", 1, true,
				func(store *renewal.Store, session string, _ []string) error {
					ents, err := store.List()
					if err != nil {
						return exitf(exitcode.Failed, "%v", err)
					}
					if o.JSON {
						if ents == nil {
							ents = []renewal.Entry{}
						}
						return writeIndentedJSON(e.Out, ents)
					}
					if len(ents) == 0 {
						fmt.Fprintf(e.Out, "%s: no continuation payloads\n", session)
						return nil
					}
					tw := tabwriter.NewWriter(e.Out, 0, 4, 2, ' ', 0)
					fmt.Fprintln(tw, "ID\tKIND\tSIZE\tDIGEST\tCREATED\tEXPIRES")
					for _, en := range ents {
						exp := en.Expires.Format(time.RFC3339)
						if en.Expired {
							exp += " (expired)"
						}
						fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", en.PayloadID, en.PayloadKind, en.ByteSize, en.Digest, en.Created.Format(time.RFC3339), exp)
					}
					return tw.Flush()
				}),
		},
	}
}

// continuationStore opens the continuation store of an existing session.
func continuationStore(e *env, o continuationOptions, session string) (*renewal.Store, error) {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return nil, exitf(exitcode.Failed, "%v", err)
	}
	if err := statedir.ValidateSessionID(session); err != nil {
		return nil, usageErrorf("%v", err)
	}
	if _, err := statedir.ReadSession(root, session); err != nil {
		return nil, exitf(exitcode.Failed, "unknown session %q in %s; see `lifeloop sessions`", session, root)
	}
	return &renewal.Store{Dir: statedir.ContinuationPath(root, session), Now: e.Now}, nil
}
