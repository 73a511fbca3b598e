package stream

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestKeeperIsPure: the rules of the story do no I/O, start no goroutine
// and arm no timer — the caller supplies the time and does all three. No
// file of the package (tests aside) imports a package that does I/O or
// concurrency, starts a goroutine, or calls the time package's clocks and
// timers.
func TestKeeperIsPure(t *testing.T) {
	forbiddenImports := []string{"os", "io", "net", "sync", "syscall", "log", "bufio", "context", "runtime", "unsafe", "golang.org/x/sys"}
	forbiddenTime := map[string]bool{"Now": true, "Sleep": true, "After": true, "AfterFunc": true, "NewTimer": true, "NewTicker": true, "Tick": true, "Since": true, "Until": true}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbiddenImports {
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("%s imports %s: the keeper does no I/O and no concurrency", name, p)
				}
			}
			if strings.HasPrefix(p, "github.com/lifeloop/lifeloop/") && p != "github.com/lifeloop/lifeloop/contract" && p != "github.com/lifeloop/lifeloop/internal/moment" {
				t.Errorf("%s imports %s: the keeper depends on the contract and the moment only", name, p)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: starts a goroutine at %s", name, fset.Position(x.Pos()))
			case *ast.SelectorExpr:
				if id, ok := x.X.(*ast.Ident); ok && id.Name == "time" && forbiddenTime[x.Sel.Name] {
					t.Errorf("%s: calls time.%s at %s; the caller supplies the time", name, x.Sel.Name, fset.Position(x.Pos()))
				}
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source file checked")
	}
}
