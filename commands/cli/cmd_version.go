package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"
)

func versionCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "version",
		Usage: "print lifeloop's version and the contract version it speaks",
		Action: func(*ucli.Context) error {
			_, err := fmt.Fprintf(e.Out, "lifeloop %s (contract lifeloop.v0.2)\n", Version)
			return err
		},
	}
}
