package claude

import "github.com/lifeloop/lifeloop/telemetry"

// For the tests in package claude_test, which cannot live in this package
// because they import internal/testharness (which imports it).

// Discoverer is the transcript discoverer TelemetrySource returns.
type Discoverer = discoverer

// WindowConfig is the window overrides the parser measures usage against.
type WindowConfig = windowConfig

// NewParser returns a transcript parser.
func NewParser(cfg WindowConfig) telemetry.Parser { return newParser(cfg) }

// ParserWindow returns the window overrides of a parser NewParser or
// TelemetrySource made.
func ParserWindow(p telemetry.Parser) WindowConfig { return p.(*parser).cfg }
