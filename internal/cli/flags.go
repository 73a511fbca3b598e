package cli

import ucli "github.com/urfave/cli/v2"

// stateDirFlag is the --state-dir flag shared by every command that reads
// or writes sessions.
func stateDirFlag(dest *string) ucli.Flag {
	return &ucli.StringFlag{
		Name:        "state-dir",
		Usage:       "state `DIR` (default $LIFELOOP_STATE_DIR, $XDG_STATE_HOME/lifeloop, ~/.local/state/lifeloop)",
		Destination: dest,
	}
}
