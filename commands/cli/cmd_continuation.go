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

func continuationCommand(e *env) *ucli.Command {
	// The session is named as every session command names it: its id,
	// the short id `lifeloop top` and `sessions` print, or --latest.
	o := controlOptions{ReadOnly: true}
	sub := func(name, args, usage string, nargs int, withJSON bool, run func(store *renewal.Store, session string, args []string) error) *ucli.Command {
		return &ucli.Command{
			Name: name, ArgsUsage: args, Usage: usage, Flags: controlFlags(&o, withJSON), OnUsageError: commandUsageError,
			Action: func(c *ucli.Context) error {
				rest, want := c.Args().Slice(), nargs
				if o.Latest {
					want--
				} else if len(rest) > 0 {
					o.Session, rest = rest[0], rest[1:]
				}
				if c.NArg() != want {
					return usageErrorf("continuation %s takes %s, got %d arguments", name, args, c.NArg())
				}
				if o.Session != "" {
					if err := statedir.ValidateSessionID(o.Session); err != nil {
						return usageErrorf("%v", err)
					}
				}
				root, rec, err := resolveSession(e, o)
				if err != nil {
					return err
				}
				store := &renewal.Store{Dir: statedir.ContinuationPath(root, rec.ID), Now: e.Now}
				return run(store, rec.ID, rest)
			},
		}
	}
	return &ucli.Command{
		Name:            "continuation",
		Usage:           "manage a session's continuation payloads (delivered at its next renewal)",
		HideHelpCommand: true,
		Subcommands: []*ucli.Command{
			sub("put", "SESSION|--latest FILE", "store a payload envelope (FILE, or - for standard input) for the next renewal", 2, false,
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
			sub("get", "SESSION|--latest PAYLOAD_ID", "print a stored payload's body (base64 bodies decoded; a body_ref is printed as is)", 2, true,
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
			sub("drop", "SESSION|--latest PAYLOAD_ID", "remove a stored payload", 2, false,
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
			sub("list", "SESSION|--latest", "list stored payloads: id, kind, size, digest, created, expires, and which renewal left one undelivered (never bodies)", 1, true,
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
					fmt.Fprintln(tw, "ID\tKIND\tSIZE\tDIGEST\tCREATED\tEXPIRES\tUNDELIVERED")
					for _, en := range ents {
						exp := en.Expires.Format(time.RFC3339)
						if en.Expired {
							exp += " (expired)"
						}
						fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", en.PayloadID, en.PayloadKind, en.ByteSize, en.Digest, en.Created.Format(time.RFC3339), exp, undeliveredLabel(en.Undelivered))
					}
					return tw.Flush()
				}),
		},
	}
}

// undeliveredLabel says which renewal left a stored payload undelivered,
// or "-".
func undeliveredLabel(u *renewal.Undelivered) string {
	if u == nil {
		return "-"
	}
	return fmt.Sprintf("attempt %d (%s)", u.Attempt, u.Status)
}
