// Command lifeloop-top is `lifeloop top`, the full-screen view of the
// sessions, with its terminal UI linked in; lifeloop hands `top` over to
// it, so lifeloop itself never links that UI.
package main

import (
	"os"

	"github.com/lifeloop/lifeloop/commands/cli"
	"github.com/lifeloop/lifeloop/commands/cli/topcmd"
)

func main() {
	os.Exit(topcmd.Main(os.Args, cli.OSStreams()))
}
