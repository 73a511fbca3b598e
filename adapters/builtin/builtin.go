// Package builtin is lifeloop's harness registry: one line per harness,
// in a fixed order. Adding a harness is its folder under adapters/ and a
// line here.
package builtin

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/adapters/copilot"
	"github.com/lifeloop/lifeloop/adapters/gemini"
	"github.com/lifeloop/lifeloop/adapters/generic"
	"github.com/lifeloop/lifeloop/adapters/hermes"
	"github.com/lifeloop/lifeloop/adapters/openclaw"
	"github.com/lifeloop/lifeloop/adapters/opencode"
	"github.com/lifeloop/lifeloop/adapters/pi"
	"github.com/lifeloop/lifeloop/adapters/qwen"
)

// Default returns the built-in registry: claude, codex, gemini, opencode,
// pi, hermes, openclaw, copilot, qwen, generic — in that order. Each call builds a new
// registry.
func Default() *adapters.Registry {
	r, err := adapters.New(
		claude.Harness{},
		codex.Harness{},
		gemini.Harness{},
		opencode.Harness{},
		pi.Harness{},
		hermes.Harness{},
		openclaw.Harness{},
		copilot.Harness{},
		qwen.Harness{},
		generic.Harness{},
	)
	if err != nil {
		// The built-in set is fixed; TestDefaultRegistry proves New accepts it.
		panic(err)
	}
	return r
}
