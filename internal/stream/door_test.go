package stream

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneDriver: `run` (launcher), `watch` and `host-hook`
// (internal/nativehook) reach the keeper through its one driver only:
// each builds a Driver, none names the Keeper or its constructor, so
// none can call the keeper's methods in an order of its own; and inside
// this package only the driver asks the keeper for receipts (Ready) and
// tells it what was recorded (Recorded).
func TestOneDriver(t *testing.T) {
	door := map[string]bool{
		"NewDriver": true, "Driver": true, "Recorder": true, "Callbacks": true, "Config": true,
		"Fact": true, "Kind": true, "Hold": true, "HookFailedWarning": true,
		"Own": true, "Direct": true, "After": true, "Replay": true, "Stop": true, "Renewal": true, "Started": true,
		"Transcript": true, "Hook": true, "Placing": true, "HookCall": true, "Due": true, "Drained": true, "Bind": true,
	}
	for _, dir := range []string{"../../launcher", "../../watch", "../nativehook"} {
		used := map[string]bool{}
		for name, f := range parseDir(t, dir) {
			stream := importName(f, "github.com/lifeloop/lifeloop/internal/stream")
			if stream == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && id.Name == stream {
						used[sel.Sel.Name] = true
						if !door[sel.Sel.Name] {
							t.Errorf("%s/%s uses stream.%s: go through the driver (stream.NewDriver, Driver.Step)", dir, name, sel.Sel.Name)
						}
					}
				}
				return true
			})
		}
		if !used["NewDriver"] {
			t.Errorf("%s builds no stream.Driver: its moments do not go through the one driver", dir)
		}
	}
	for name, f := range parseDir(t, ".") {
		if name == "driver.go" {
			continue
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			ast.Inspect(fn, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				// Taking up a session's prior receipts (resume) notes them
				// recorded: they are.
				if ok && (sel.Sel.Name == "Ready" || sel.Sel.Name == "Recorded" && fn.Name.Name != "resume") {
					t.Errorf("%s: %s calls %s: only the driver (driver.go) records what the keeper makes ready", name, fn.Name.Name, sel.Sel.Name)
				}
				return true
			})
		}
	}
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) map[string]*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ast.File{}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = f
	}
	if len(out) == 0 {
		t.Fatalf("no source file in %s", dir)
	}
	return out
}

// importName is the name file f imports path under, or "".
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return filepath.Base(path)
	}
	return ""
}
