package cli

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/schema"
)

// TestScripts runs every testdata/script/*.txtar. Each script gets its own
// $WORK with HOME=$WORK/home and LIFELOOP_STATE_DIR=$WORK/state, and no
// XDG_STATE_HOME, so nothing touches the real home or state.
//
// The programs scripts run (lifeloop and the others): see TestMain
// (main_test.go). Extra script commands: see scriptCmds.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                filepath.Join("testdata", "script"),
		RequireUniqueNames: true,
		// LIFELOOP_UPDATE_SCRIPTS=1 rewrites the golden files a script
		// compares stdout with (cmp stdout FILE) from what it printed.
		UpdateScripts: os.Getenv("LIFELOOP_UPDATE_SCRIPTS") == "1",
		Setup: func(e *testscript.Env) error {
			home := filepath.Join(e.WorkDir, "home")
			if err := os.MkdirAll(home, 0o700); err != nil {
				return err
			}
			e.Setenv("HOME", home)
			e.Setenv("LIFELOOP_STATE_DIR", filepath.Join(e.WorkDir, "state"))
			e.Setenv("XDG_STATE_HOME", "")
			e.Setenv("LIFELOOP_MACHINE", "test-machine") // session_created's metadata.machine
			return nil
		},
		Cmds: scriptCmds(),
	})
}

// scriptCmds are the script commands beyond testscript's built-ins:
//
//	exitcode N prog [args...]   run prog like exec and require exit code N;
//	                            stdout and stderr are kept for later checks
//	waitfile PATH               wait (up to 30s) until PATH exists
//	ctl SIDFILE OP [ARGS_JSON]  call the live wrapper's control socket directly
//	validate-schema KIND FILE   FILE must satisfy the embedded JSON Schema
//	                            for KIND (schema.Kinds); with ! it must not
func scriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"exitcode":        cmdExitCode,
		"waitfile":        cmdWaitFile,
		"ctl":             cmdCtl,
		"validate-schema": cmdValidateSchema,
	}
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("exitcode does not support !")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}

func cmdValidateSchema(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: validate-schema KIND FILE")
	}
	err := schema.Validate(args[0], []byte(ts.ReadFile(args[1])))
	switch {
	case err != nil && !neg:
		ts.Fatalf("%s does not satisfy the %s schema: %v", args[1], args[0], err)
	case err == nil && neg:
		ts.Fatalf("%s satisfies the %s schema, want it rejected", args[1], args[0])
	case err != nil:
		ts.Logf("rejected as expected: %v", err)
	}
}

// TestEveryCommandHasHelp walks the whole command tree: every command and
// subcommand has a usage line, and `--help` on it exits 0 and prints that
// line, with nothing on stderr.
func TestEveryCommandHasHelp(t *testing.T) {
	var walk func(path []string, cmds []*ucli.Command)
	n := 0
	walk = func(path []string, cmds []*ucli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(slices.Clone(path), c.Name)
			n++
			t.Run(strings.Join(p, "_"), func(t *testing.T) {
				if c.Usage == "" {
					t.Fatalf("lifeloop %s has no Usage", strings.Join(p, " "))
				}
				var out, errOut bytes.Buffer
				code := Main(append(append([]string{"lifeloop"}, p...), "--help"), Streams{
					In: strings.NewReader(""), Out: &out, Err: &errOut,
					Getenv: func(string) string { return "" },
				})
				if code != exitcode.OK || errOut.Len() > 0 {
					t.Fatalf("exit %d, stderr %q", code, errOut.String())
				}
				if !strings.Contains(out.String(), c.Usage) {
					t.Errorf("help does not show the usage %q:\n%s", c.Usage, out.String())
				}
			})
			walk(p, c.Subcommands)
		}
	}
	walk(nil, newApp(&env{}).Commands)
	if n < 6 {
		t.Errorf("walked only %d commands", n)
	}
}

// TestReadmeCommandTableIsScripted keeps the README's command table and
// testdata/script/readme.txtar together: every row of the table (the text
// of its first cell between the outer backticks) has a "# README: ROW"
// block in the script, which runs the row as written, and the script has
// no block for a row that is gone.
func TestReadmeCommandTableIsScripted(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("testdata", "script", "readme.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "| `lifeloop ") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "` | ")
		rows = append(rows, cell)
	}
	if len(rows) < 15 {
		t.Fatalf("found %d command rows in README.md", len(rows))
	}
	scripted := map[string]bool{}
	for _, line := range strings.Split(string(script), "\n") {
		if row, ok := strings.CutPrefix(line, "# README: "); ok {
			scripted[row] = true
		}
	}
	for _, row := range rows {
		if !scripted[row] {
			t.Errorf("README row `%s` has no block in testdata/script/readme.txtar; add one starting with the line\n# README: %s", row, row)
		}
		delete(scripted, row)
	}
	for row := range scripted {
		t.Errorf("testdata/script/readme.txtar has a block for `%s`, which is no row of README.md's command table", row)
	}
}
