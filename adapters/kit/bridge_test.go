package kit

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBridgeModule: the runtime comes first, then the line making
// `lifeloop` for the adapter and the program (as JSON string literals,
// quotes and separators escaped), then the glue unchanged.
func TestBridgeModule(t *testing.T) {
	got := string(BridgeModule("x", []string{`/opt/a "b"/lifeloop`, "--state-dir", "/s\u2028"}, "GLUE\n"))
	want := bridgeRuntime + "\nconst lifeloop = lifeloopBridge(\"x\", [\"/opt/a \\\"b\\\"/lifeloop\",\"--state-dir\",\"/s\\u2028\"]);\n\nGLUE\n"
	if got != want {
		t.Errorf("BridgeModule =\n%s\nwant\n%s", got[len(bridgeRuntime):], want[len(bridgeRuntime):])
	}
}

// bridgeRuntimeMarks are what only the bridge runtime does: reach the
// control socket, start the fallback program.
var bridgeRuntimeMarks = []string{"node:net", "node:child_process", "createConnection", "spawn(", "LIFELOOP_CONTROL_SOCKET"}

// TestBridgeSocketCodeExistsOnce: no JavaScript or TypeScript under
// adapters/ but the kit's runtime opens the control socket or starts the
// fallback program; a plug-in's bridge is glue calling lifeloop.call.
func TestBridgeSocketCodeExistsOnce(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	glue := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".js", ".mjs", ".cjs", ".ts":
		default:
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if filepath.ToSlash(rel) == "kit/bridge.js" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, mark := range bridgeRuntimeMarks {
			if strings.Contains(string(b), mark) {
				t.Errorf("adapters/%s has %q: the control socket and the fallback belong to the kit's bridge runtime (adapters/kit/bridge.js); call lifeloop.call", rel, mark)
			}
		}
		if strings.Contains(string(b), "lifeloop.call(") {
			glue++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if glue < 3 {
		t.Errorf("%d bridges call lifeloop.call, want every bridge under adapters/ (3 or more)", glue)
	}
}
