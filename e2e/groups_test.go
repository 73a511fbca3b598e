package e2e

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The package's tests fall into two groups, which `make test` runs as two
// processes at once: the serial group, tests that type into a harness's
// terminal and time their keys (they do not call t.Parallel), one after
// another, and the parallel group, all the others. LIFELOOP_E2E_GROUP=serial
// or =parallel runs one group (the other's tests are skipped); unset, one
// process runs both, the serial ones first (Go runs a package's parallel
// tests once its sequential ones are done). A test is in the parallel
// group when its body calls t.Parallel(): the source says so, and nothing
// else has to be kept in step with it.
const groupEnv = "LIFELOOP_E2E_GROUP"

// selectGroup adds the tests of the group LIFELOOP_E2E_GROUP does not
// name to -test.skip. flag.Parse must have run.
func selectGroup() error {
	group := os.Getenv(groupEnv)
	if group == "" {
		return nil
	}
	serial, parallel, err := testGroups(".")
	if err != nil {
		return err
	}
	var skip []string
	switch group {
	case "serial":
		skip = parallel
	case "parallel":
		skip = serial
	default:
		return fmt.Errorf("%s=%q: want serial or parallel", groupEnv, group)
	}
	if len(skip) == 0 {
		return nil
	}
	pattern := "^(" + strings.Join(skip, "|") + ")$"
	if cur := flag.Lookup("test.skip").Value.String(); cur != "" {
		pattern = cur + "|" + pattern
	}
	return flag.Set("test.skip", pattern)
}

// testGroups reads the test files of dir: the Test functions whose body
// calls t.Parallel() are parallel, the others serial. Both lists are
// sorted.
func testGroups(dir string) (serial, parallel []string, err error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, nil, err
	}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Name.Name == "TestMain" {
				continue
			}
			if callsParallel(fn.Body) {
				parallel = append(parallel, fn.Name.Name)
			} else {
				serial = append(serial, fn.Name.Name)
			}
		}
	}
	slices.Sort(serial)
	slices.Sort(parallel)
	return serial, parallel, nil
}

// callsParallel reports whether one of body's own statements is
// t.Parallel() (a subtest's call inside a closure does not count).
func callsParallel(body *ast.BlockStmt) bool {
	for _, st := range body.List {
		es, ok := st.(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*ast.CallExpr)
		if !ok {
			continue
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Parallel" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "t" {
				return true
			}
		}
	}
	return false
}
