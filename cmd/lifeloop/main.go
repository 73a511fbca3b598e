// Command lifeloop normalizes the lifecycle of AI coding harnesses.
package main

import (
	"os"

	"github.com/lifeloop/lifeloop/commands/cli"
)

func main() {
	os.Exit(cli.Main(os.Args, cli.OSStreams()))
}
