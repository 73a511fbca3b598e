package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
)

// conformanceOptions are the inputs of `lifeloop conformance`.
type conformanceOptions struct {
	// Paths are case files, or folders whose *.json files are cases.
	Paths []string
	Out   io.Writer
	Now   func() time.Time
}

func conformanceCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:  "conformance",
		Usage: "check contract documents against lifeloop's decoder and validator",
		Description: "Each FILE is a conformance case:\n\n" +
			`  {"kind": "lifecycle_receipt", "expect": "invalid", "expect_error": "sequence",` + "\n" +
			`   "description": "...", "data": {...the document...}}` + "\n\n" +
			"kind is one of " + strings.Join(contract.ConformanceKinds, ", ") + ";\n" +
			"expect is valid or invalid; expect_error, when given, must appear in the error;\n" +
			"now_epoch_s fixes the clock for payload expiry. A FILE that is a folder means\n" +
			"every *.json file in it.\n\n" +
			"Prints one line per file: PASS or FAIL, the file, and the verdict.\n" +
			"Exit status: 0 every case matched; 1 a case did not match or is malformed;\n" +
			"2 usage; 3 a file is unreadable or not JSON.",
		ArgsUsage:    "FILE...",
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.NArg() == 0 {
				return usageErrorf("conformance needs at least one case FILE or folder (see --help)")
			}
			return conformanceRun(e.ctx, conformanceOptions{Paths: c.Args().Slice(), Out: e.Out, Now: e.Now})
		},
	}
}

// conformanceRun checks every case and prints one line per file.
func conformanceRun(_ context.Context, opts conformanceOptions) error {
	files, err := conformanceFiles(opts.Paths)
	if err != nil {
		return err
	}
	var failed, unreadable int
	for _, f := range files {
		verdict, detail := checkCaseFile(f, opts.Now())
		switch verdict {
		case "FAIL":
			failed++
		case "ERROR":
			unreadable++
		}
		if _, err := fmt.Fprintf(opts.Out, "%s %s: %s\n", verdict, f, detail); err != nil {
			return err
		}
	}
	switch {
	case unreadable > 0:
		return exitf(exitcode.Unreadable, "%d of %d files unreadable or not JSON (see the ERROR lines)", unreadable, len(files))
	case failed > 0:
		return exitf(exitcode.Failed, "%d of %d cases did not match their expectation (see the FAIL lines)", failed, len(files))
	}
	return nil
}

// conformanceFiles expands folders into their *.json files, sorted.
func conformanceFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			// Unreadable files are reported per file.
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.json"))
		if err != nil {
			return nil, exitf(exitcode.Unreadable, "cannot list %s: %v", p, err)
		}
		if len(matches) == 0 {
			return nil, exitf(exitcode.Unreadable, "folder %s holds no *.json case files", p)
		}
		slices.Sort(matches)
		files = append(files, matches...)
	}
	return files, nil
}

// checkCaseFile returns PASS, FAIL or ERROR and the detail for one file.
func checkCaseFile(name string, now time.Time) (verdict, detail string) {
	data, err := os.ReadFile(name)
	if err != nil {
		return "ERROR", fmt.Sprintf("cannot read: %v", unwrapPathError(err))
	}
	if why := notJSON(data); why != "" {
		return "ERROR", strings.TrimPrefix(why, "is ")
	}
	ok, detail, err := contract.CheckConformanceCase(data, now)
	switch {
	case err != nil:
		return "FAIL", err.Error()
	case !ok:
		return "FAIL", detail
	default:
		return "PASS", detail
	}
}
