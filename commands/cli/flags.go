package cli

import (
	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/ledger"
)

// durabilityFlag is --durability, for commands that write a ledger.
func durabilityFlag(dest *string) ucli.Flag {
	return &ucli.StringFlag{
		Name: "durability",
		Usage: "when receipts reach the disk: `group` (the default: written before they are acknowledged, " +
			"synced within 50 ms and at every session change) or sync (one fdatasync per receipt); default $" + ledger.DurabilityEnv,
		Destination: dest,
	}
}

// envDurability is $LIFELOOP_DURABILITY for processes without the flag
// (hooks, emit): an unknown value means the default.
func envDurability(getenv func(string) string) ledger.SyncMode {
	m, _ := ledger.ParseDurability(getenv(ledger.DurabilityEnv))
	return m
}

// durability resolves --durability (flag, else $LIFELOOP_DURABILITY).
func durability(flag string, getenv func(string) string) (ledger.SyncMode, error) {
	v := flag
	if v == "" {
		v = getenv(ledger.DurabilityEnv)
	}
	m, err := ledger.ParseDurability(v)
	if err != nil {
		return m, usageErrorf("--durability: %v", err)
	}
	return m, nil
}

// stateDirFlag is the --state-dir flag shared by every command that reads
// or writes sessions.
func stateDirFlag(dest *string) ucli.Flag {
	return &ucli.StringFlag{
		Name:        "state-dir",
		Usage:       "state `DIR` (default $LIFELOOP_STATE_DIR, $XDG_STATE_HOME/lifeloop, ~/.local/state/lifeloop)",
		Destination: dest,
	}
}
