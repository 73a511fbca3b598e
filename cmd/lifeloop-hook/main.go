// Command lifeloop-hook serves one native hook call of a harness under
// `lifeloop run` (see package hookcall); `lifeloop run` installs it as the
// hook command when it is beside lifeloop.
package main

import (
	"os"

	"github.com/lifeloop/lifeloop/internal/hookcall"
)

func main() {
	exe, _ := os.Executable()
	os.Exit(hookcall.Main(hookcall.Env{
		Args: os.Args, Stdin: os.Stdin, Stdout: os.Stdout, Getenv: os.Getenv,
		Full: hookcall.FullProgram(exe),
	}))
}
