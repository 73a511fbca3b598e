package claude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// A background session's renewal (measured with 2.1.332 and the mock):
// `claude stop ID` ends its process (the job stays, state stopped), and
// `claude --bg --resume SESSION PROMPT` — with no other option — continues
// the same session: the same id and transcript, the earlier turns sent to
// the model with PROMPT as the next prompt, in a new process (a warm spare
// or a cold start) that comes through the process wrapper. With any other
// option Claude starts a copy under a new id instead ("keeps its own saved
// options"), and an --append-system-prompt-file given there did not reach
// the model; so the continuation travels as the prompt, which Claude
// writes to the transcript as the person's prompt.

var _ adapters.BackgroundRenewer = Harness{}

// bgCommandBound bounds one `claude stop` or `claude --bg`: each answers
// in well under a second once the daemon runs (a first `--bg` starts it).
const bgCommandBound = time.Minute

// StopBackground implements adapters.BackgroundRenewer: `claude stop
// SHORT` (the session id's first eight characters, Claude's job id).
func (Harness) StopBackground(ctx context.Context, env []string, session string) error {
	if !validUUID(session) {
		return fmt.Errorf("%q is not a Claude session id", session)
	}
	return runClaude(ctx, env, "", "stop", session[:8])
}

// ResumeBackground implements adapters.BackgroundRenewer: `claude --bg
// --resume SESSION PROMPT` in cwd, and nothing else on the command line
// (another option makes Claude start a copy under a new id).
func (Harness) ResumeBackground(ctx context.Context, env []string, cwd, session, prompt string) error {
	if !validUUID(session) {
		return fmt.Errorf("%q is not a Claude session id", session)
	}
	if strings.TrimSpace(prompt) == "" {
		return errors.New("no prompt to resume the session with")
	}
	return runClaude(ctx, env, cwd, "--bg", "--resume", session, prompt)
}

// runClaude runs the claude on env's PATH with args in its own process
// group (killed with it at the bound), and returns its failure with the
// first line it wrote to stderr.
func runClaude(ctx context.Context, env []string, dir string, args ...string) error {
	bin := adapters.LookPath("claude", adapters.EnvValue(env, "PATH"))
	if bin == "" {
		return errors.New("no claude on PATH")
	}
	ctx, cancel := context.WithTimeout(ctx, bgCommandBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("claude %s did not answer within %s", args[0], bgCommandBound)
		}
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if msg != "" {
			return fmt.Errorf("claude %s: %w: %s", args[0], err, msg)
		}
		return fmt.Errorf("claude %s: %w", args[0], err)
	}
	return nil
}

// PromptDelivered implements adapters.BackgroundRenewer: the session's
// transcript (<config>/projects/<folder>/<session>.jsonl) has a person's
// prompt (a user line that is no tool result) whose text is prompt,
// stamped at or after since.
func (Harness) PromptDelivered(env []string, cwd, session, prompt string, since time.Time) bool {
	dir, err := configDir(env)
	if err != nil || !validUUID(session) {
		return false
	}
	f, err := os.Open(filepath.Join(dir, "projects", ProjectDirName(cwd), session+".jsonl"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16<<20)
	for sc.Scan() {
		if !bytes.Contains(sc.Bytes(), []byte(`"user"`)) {
			continue
		}
		var l struct {
			Type      string    `json:"type"`
			Timestamp time.Time `json:"timestamp"`
			Message   struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "user" || l.Timestamp.Before(since) {
			continue
		}
		if promptText(l.Message.Content) == prompt {
			return true
		}
	}
	return false
}

// promptText is the text of a user message's content: a string, or the
// text blocks of an array joined (a tool result has none).
func promptText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "text" {
			b.WriteString(bl.Text)
		}
	}
	return b.String()
}
