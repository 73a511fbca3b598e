// Command lifeloop-otlp exports lifeloop sessions from their ledgers to
// an OpenTelemetry backend over OTLP/HTTP; see docs/otel.md.
package main

import (
	"os"

	"github.com/lifeloop/lifeloop/commands/otlpcmd"
)

func main() {
	os.Exit(otlpcmd.Main(os.Args, otlpcmd.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}))
}
