package kit

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// A hook bridge is a JavaScript module lifeloop writes for a harness that
// loads modules into its own process (a TypeScript extension, a plugin
// run by Node or Bun): the harness's events become hook calls to the
// wrapper. What every bridge does with a call — the control socket, the
// fallback to `lifeloop host-hook`, the order — is bridge.js, embedded
// here once; a plug-in keeps only its glue (which events, which input)
// and BridgeModule inlines the runtime into the one file the harness
// loads, so no loader has to resolve a second file.

//go:embed bridge.js
var bridgeRuntime string

// BridgeModule returns the source of adapter's hook bridge: the runtime,
// the line that makes `lifeloop` for adapter with hookCommand (the
// lifeloop program and any leading arguments) as the fallback program,
// then glue, the plug-in's own code, which calls lifeloop.call. The
// result is valid JavaScript and TypeScript when glue is.
func BridgeModule(adapter string, hookCommand []string, glue string) []byte {
	name, _ := json.Marshal(adapter)
	cmd, _ := json.Marshal(hookCommand)
	var b strings.Builder
	b.WriteString(bridgeRuntime)
	b.WriteString("\nconst lifeloop = lifeloopBridge(" + string(name) + ", " + string(cmd) + ");\n\n")
	b.WriteString(glue)
	return []byte(b.String())
}
