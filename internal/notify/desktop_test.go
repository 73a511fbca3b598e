package notify

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestDesktopShowsTheKindAndDetail(t *testing.T) {
	if runtime.GOOS == "darwin" {
		t.Skip("the fake program stands for notify-send")
	}
	bin, dir := t.TempDir(), t.TempDir()
	script(t, bin, "notify-send", `for a in "$@"; do printf '%s\n' "$a"; done >> "$NOTIFY_TEST_DIR/args"`)
	log, logged := logger()
	n := New(Config{Desktop: true, Env: []string{"PATH=" + bin, "NOTIFY_TEST_DIR=" + dir}}, log)
	e := episode(1, "needs_permission")
	e.Detail = "Bash:\nrm -rf build"
	n.Opened(e)
	n.Closed(e) // the desktop is told of openings only
	n.Wait(time.Minute)
	data, err := os.ReadFile(filepath.Join(dir, "args"))
	if err != nil {
		t.Fatal(err)
	}
	want := "--app-name=lifeloop\n--\nfakeharness: needs permission\nBash: rm -rf build (proj)\n"
	if string(data) != want {
		t.Fatalf("notify-send got\n%q\nwant\n%q", data, want)
	}
	if s := logged.String(); s != "" {
		t.Errorf("logged: %s", s)
	}
}

func TestDesktopWithoutProgramIsLoggedOnce(t *testing.T) {
	log, logged := logger()
	n := New(Config{Desktop: true, Env: []string{"PATH=" + t.TempDir()}}, log)
	n.Opened(episode(1, "needs_answer"))
	n.Opened(episode(2, "needs_answer"))
	n.Wait(time.Minute)
	if c := strings.Count(logged.String(), "no desktop notification program"); c != 1 {
		t.Fatalf("logged %d times, want once:\n%s", c, logged)
	}
}

func TestDesktopArgsOnMacOSKeepTheTextOutOfTheScript(t *testing.T) {
	name, args := desktopArgs("darwin", `a "title"`, `b"; do shell script "x`)
	if name != "osascript" || args[len(args)-2] != `a "title"` || args[len(args)-1] != `b"; do shell script "x` {
		t.Fatalf("osascript %q", args)
	}
	for _, a := range args[:len(args)-2] {
		if strings.Contains(a, "title\"") || strings.Contains(a, "shell script") {
			t.Fatalf("the text is inside the script: %q", args)
		}
	}
}

func TestDesktopTextIsOneBoundedLine(t *testing.T) {
	e := episode(1, "stopped_on_error")
	e.Detail = strings.Repeat("é", 500)
	title, body := desktopText(e)
	if title != "fakeharness: stopped on error" {
		t.Errorf("title %q", title)
	}
	if n := len([]rune(body)); n != maxLine || strings.Contains(body, "\n") {
		t.Errorf("body of %d characters: %q", n, body)
	}
}
