package cli

import (
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/pricing"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/usage"
)

// usageOptions are the inputs of `lifeloop usage`.
type usageOptions struct {
	StateDir     string
	By           ucli.StringSlice
	Since, Until string
	JSON, Prices bool
	UTC          bool
}

func usageCommand(e *env) *ucli.Command {
	var o usageOptions
	read, unread := usageHarnesses(e.Registry())
	return &ucli.Command{
		Name:  "usage",
		Usage: "tokens and cost of every harness session on this machine, wrapped or not",
		Description: "Reads the session files of every harness on this machine and sums the tokens of each\n" +
			"model call (input, cache read, cache write, output, reasoning, as the harness reports\n" +
			"them) and its cost: native (the harness recorded it), estimated (lifeloop's price table,\n" +
			"from @pydantic/genai-prices, with $XDG_CONFIG_HOME/lifeloop/prices.json over it) or\n" +
			"unknown (the model has no price: shown as ?, never 0). A second run reads only what\n" +
			"changed (an index in <state>/usage/); a call two files hold (a resumed session's copy)\n" +
			"counts once, its identities put in a temporary file ($TMPDIR) for a large corpus, so\n" +
			"memory stays bounded. A damaged file is reported once on stderr and\n" +
			"skipped. The files are found as the harnesses keep them (HOME and each harness's own\n" +
			"variables). See docs/usage.md.\n\n" +
			"Harnesses read: " + strings.Join(read, ", ") + ".\n" +
			"Not read yet: " + strings.Join(unread, ", ") + ".",
		Flags: []ucli.Flag{
			stateDirFlag(&o.StateDir),
			&ucli.StringSliceFlag{Name: "by", Usage: "group by day, session, model, harness or project (repeat, or a comma list)", Value: ucli.NewStringSlice("day"), Destination: &o.By},
			&ucli.StringFlag{Name: "since", Usage: "only days from `DATE` (YYYY-MM-DD)", Destination: &o.Since},
			&ucli.StringFlag{Name: "until", Usage: "only days up to `DATE` (YYYY-MM-DD), inclusive", Destination: &o.Until},
			&ucli.BoolFlag{Name: "json", Usage: "print the report as JSON", Destination: &o.JSON},
			&ucli.BoolFlag{Name: "utc", Usage: "count days in UTC, not the local time zone", Destination: &o.UTC},
			&ucli.BoolFlag{Name: "prices", Usage: "print the price table's source, version and date and the user price file, and exit", Destination: &o.Prices},
		},
		OnUsageError: commandUsageError,
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("usage takes no arguments (got %q)", c.Args().First())
			}
			return usageRun(e, o)
		},
	}
}

// usageHarnesses names the harnesses whose files `usage` reads and those
// it does not read yet.
func usageHarnesses(r *adapters.Registry) (read, unread []string) {
	for _, a := range r.All() {
		if _, ok := a.Harness().(adapters.UsageReader); ok {
			read = append(read, a.ID)
		} else if _, ok := a.Harness().(adapters.UsageStore); ok {
			read = append(read, a.ID)
		} else {
			unread = append(unread, a.ID)
		}
	}
	return read, unread
}

func usageRun(e *env, o usageOptions) error {
	var by []string
	for _, v := range o.By.Value() {
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d == "" {
				continue
			}
			if !slices.Contains(usage.Dimensions, d) {
				return usageErrorf("--by %q: give one of %s", d, strings.Join(usage.Dimensions, ", "))
			}
			if !slices.Contains(by, d) {
				by = append(by, d)
			}
		}
	}
	since, err := usageDay("since", o.Since)
	if err != nil {
		return err
	}
	until, err := usageDay("until", o.Until)
	if err != nil {
		return err
	}
	userFile := pricing.UserFile(e.Getenv)
	pr, err := pricing.New(userFile)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	info := usage.PriceInfo{Source: pr.Info.Source, Version: pr.Info.Version, Date: pr.Info.Date, UserFile: pr.UserPath}
	if o.Prices {
		user := "none"
		if pr.UserPath != "" {
			user = fmt.Sprintf("%s (%d models)", pr.UserPath, len(pr.User))
		} else if userFile != "" {
			user = "none (" + userFile + " does not exist)"
		}
		_, err := fmt.Fprintf(e.Out, "price table: %s %s (%s, %s), %d models\nuser prices: %s\n",
			pr.Info.Source, pr.Info.Version, pr.Info.Date, pr.Info.License, pr.Table().Models(), user)
		return err
	}
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	loc := time.Local
	if o.UTC {
		loc = time.UTC
	}
	restore := slowCollector()
	defer restore()
	sc := &usage.Scanner{Getenv: e.Getenv, Pricer: pr, StateDir: root, Location: loc, Warn: e.Err, BeforeReading: restore}
	for _, a := range e.Registry().All() {
		if ur, ok := a.Harness().(adapters.UsageReader); ok {
			sc.Sources = append(sc.Sources, usage.Source{Harness: a.ID, Reader: ur})
		} else if us, ok := a.Harness().(adapters.UsageStore); ok {
			sc.Sources = append(sc.Sources, usage.Source{Harness: a.ID, Store: us})
		}
	}
	scan, err := sc.Run()
	if scan == nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	if err != nil {
		fmt.Fprintf(e.Err, "lifeloop: warning: %v\n", err)
	}
	rep := scan.Group(by, usage.Filter{Since: since, Until: until})
	if o.JSON {
		return rep.WriteJSON(e.Out, info)
	}
	return rep.WriteTable(e.Out)
}

// gcPace is the collector's pace before slowCollector changed it, and
// how many runs hold it changed (commands run side by side in tests).
var gcPace struct {
	sync.Mutex
	held, prev int
}

// slowCollector has the garbage collector run at a quarter of its usual
// pace (GOGC 400, unless the environment set it slower) until restore
// is called. A usage run with nothing new allocates what it keeps (the
// index, the files' names) and little else, so each collection would
// only mark it again: a fifth of such a run's CPU at GOGC 100 for 10,000
// files (docs/benchmarks.md). The scan restores the pace before it reads
// a file, so reading stays within its memory bound.
func slowCollector() (restore func()) {
	gcPace.Lock()
	if gcPace.held == 0 {
		gcPace.prev = debug.SetGCPercent(400)
		if gcPace.prev < 0 || gcPace.prev > 400 {
			debug.SetGCPercent(gcPace.prev)
		}
	}
	gcPace.held++
	gcPace.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPace.Lock()
			if gcPace.held--; gcPace.held == 0 {
				debug.SetGCPercent(gcPace.prev)
			}
			gcPace.Unlock()
		})
	}
}

// usageDay reads a --since or --until date (YYYY-MM-DD or YYYYMMDD).
func usageDay(flag, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	for _, layout := range []string{"2006-01-02", "20060102"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.Format("2006-01-02"), nil
		}
	}
	return "", usageErrorf("--%s %q: give a date as YYYY-MM-DD", flag, v)
}
