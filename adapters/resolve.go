package adapters

import (
	"path"
	"strings"
)

// A command line names its harness in one of these shapes:
//
//	agent --model x                       basename of argv[0]
//	/opt/bin/agent.exe                    basename, extension dropped
//	env -u X FOO=1 agent                  env(1) and NAME=VALUE prefixes skipped
//	FOO=1 agent                           NAME=VALUE prefixes skipped
//	node --no-warnings …/@scope/agent/bin/agent.js
//	node …/@scope/agent-cli/cli.js
//	npx -y @scope/agent@1.2.3             package runners: the package spec
//	npx -p @scope/agent-cli agent
//	bunx, pnpx, pnpm dlx, yarn dlx, npm exec
//
// parseLaunch finds the harness-naming tokens and reports where the
// harness's own arguments start. Anything it cannot place is left to the
// generic adapter.

// launch is the result of parsing a command line.
type launch struct {
	// names are candidate identifiers for the harness, most specific
	// first: npm package names, script paths, executable basenames.
	names []string
	// argStart is the index in argv of the harness's first own argument
	// (len(argv) when there is none).
	argStart int
}

// nodeRuntimes start a JavaScript file given as their first positional
// argument.
var nodeRuntimes = map[string]bool{"node": true, "nodejs": true, "bun": true, "deno": true}

// nodeValueFlags are node/bun/deno options that take a separate value.
var nodeValueFlags = map[string]bool{
	"-r": true, "--require": true, "--import": true, "--loader": true,
	"--experimental-loader": true, "--env-file": true, "--conditions": true,
	"-C": true, "--title": true, "--inspect-port": true, "--stack-size": true,
}

// packageRunners run an npm package's binary; the first positional is the
// package spec unless a --package flag named it.
var packageRunners = map[string]bool{"npx": true, "bunx": true, "pnpx": true}

// runnerValueFlags are package-runner options that take a separate value
// (besides -p/--package, which names the package).
var runnerValueFlags = map[string]bool{
	"-c": true, "--call": true, "--registry": true, "--cache": true,
	"--userconfig": true, "-w": true, "--workspace": true,
}

// envValueFlags are env(1) options that take a separate value.
var envValueFlags = map[string]bool{"-u": true, "--unset": true, "-C": true, "--chdir": true, "-S": true, "--split-string": true}

// parseLaunch parses argv as described above. It never fails: an empty
// or unrecognisable argv yields no names.
func parseLaunch(argv []string) launch {
	i := 0
	for i < len(argv) {
		arg := argv[i]
		base := commandBase(arg)
		switch {
		case isEnvAssignment(arg):
			i++
		case base == "env":
			i = skipFlags(argv, i+1, envValueFlags, true)
		case nodeRuntimes[base]:
			j := skipFlags(argv, i+1, nodeValueFlags, false)
			if j < len(argv) && argv[j] == "run" && base != "node" && base != "nodejs" {
				// `bun run x.js`, `deno run x.js`
				j = skipFlags(argv, j+1, nodeValueFlags, false)
			}
			if j >= len(argv) {
				return launch{names: []string{base}, argStart: len(argv)}
			}
			return launch{names: scriptNames(argv[j]), argStart: j + 1}
		case packageRunners[base]:
			return parseRunner(argv, i+1)
		case (base == "pnpm" || base == "yarn") && i+1 < len(argv) && argv[i+1] == "dlx",
			base == "npm" && i+1 < len(argv) && (argv[i+1] == "exec" || argv[i+1] == "x"):
			return parseRunner(argv, i+2)
		default:
			return launch{names: scriptNames(arg), argStart: i + 1}
		}
	}
	return launch{argStart: len(argv)}
}

// parseRunner parses a package runner's arguments starting at i.
func parseRunner(argv []string, i int) launch {
	var pkgs []string
	for i < len(argv) {
		arg := argv[i]
		switch {
		case arg == "--":
			i++
			goto positional
		case arg == "-p" || arg == "--package":
			if i+1 < len(argv) {
				pkgs = append(pkgs, packageName(argv[i+1]))
			}
			i += 2
		case strings.HasPrefix(arg, "--package="):
			pkgs = append(pkgs, packageName(strings.TrimPrefix(arg, "--package=")))
			i++
		case runnerValueFlags[arg]:
			i += 2
		case strings.HasPrefix(arg, "-"):
			i++
		default:
			goto positional
		}
	}
positional:
	if i >= len(argv) {
		return launch{names: pkgs, argStart: len(argv)}
	}
	if len(pkgs) > 0 {
		// With --package the positional is the binary's name.
		return launch{names: append(pkgs, commandBase(argv[i])), argStart: i + 1}
	}
	return launch{names: []string{packageName(argv[i]), commandBase(argv[i])}, argStart: i + 1}
}

// skipFlags returns the index of the first positional argument at or after
// i, skipping options (and the values of those in valueFlags). When
// assignments is true, NAME=VALUE words are skipped too (env(1)).
func skipFlags(argv []string, i int, valueFlags map[string]bool, assignments bool) int {
	for i < len(argv) {
		arg := argv[i]
		switch {
		case arg == "--":
			return i + 1
		case valueFlags[arg]:
			i += 2
		case strings.HasPrefix(arg, "-") && arg != "-":
			i++
		case assignments && isEnvAssignment(arg):
			i++
		default:
			return i
		}
	}
	return i
}

// scriptNames returns the candidate names for an executable or script
// path: npm package names found among its directories (innermost
// first), then its basename without extension, then — for generic entry
// points like cli.js — the name of the directory holding it.
func scriptNames(p string) []string {
	p = strings.ReplaceAll(p, `\`, "/")
	var names []string
	dirs := strings.Split(path.Dir(p), "/")
	for k := len(dirs) - 1; k > 0; k-- {
		d, parent := dirs[k], dirs[k-1]
		switch {
		case strings.HasPrefix(parent, "@") && d != "":
			names = append(names, parent+"/"+d)
		case parent == "node_modules" && d != "" && !strings.HasPrefix(d, "."):
			names = append(names, d)
		}
	}
	base := commandBase(p)
	names = append(names, base)
	if base == "cli" || base == "index" || base == "main" {
		for k := len(dirs) - 1; k >= 0; k-- {
			if d := dirs[k]; d != "bin" && d != "dist" && d != "lib" && d != "" && d != "." {
				names = append(names, d)
				break
			}
		}
	}
	return names
}

// commandBase returns the basename of a command or script path without
// a known executable or script extension.
func commandBase(p string) string {
	b := path.Base(strings.ReplaceAll(p, `\`, "/"))
	for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", ".exe", ".cmd", ".sh"} {
		if s, ok := strings.CutSuffix(b, ext); ok && s != "" {
			return s
		}
	}
	return b
}

// packageName strips a version or tag from an npm package spec:
// "@scope/agent@1.2.3" → "@scope/agent", "agent-cli@latest" →
// "agent-cli".
func packageName(spec string) string {
	at := strings.LastIndexByte(spec, '@')
	if at > 0 {
		return spec[:at]
	}
	return spec
}

// isEnvAssignment reports whether arg has the NAME=VALUE shape of a
// shell environment prefix.
func isEnvAssignment(arg string) bool {
	name, _, ok := strings.Cut(arg, "=")
	if !ok || name == "" {
		return false
	}
	for k, r := range name {
		switch {
		case r == '_', r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		case r >= '0' && r <= '9' && k > 0:
		default:
			return false
		}
	}
	return true
}
