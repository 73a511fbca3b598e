package adapters

import (
	"context"
	"time"
)

// BackgroundRenewer is a harness whose background sessions (those its
// service runs, which lifeloop records through its process wrapper:
// ProcessWrapped) can be stopped and continued by the harness's own
// commands. lifeloop does not supervise such a session — the harness's
// service runs it, and lifeloop's wrapper execs it — so its renewal is the
// harness's stop and a resume of the same conversation with the
// continuation as the resumed session's first prompt. The resumed process
// comes through the process wrapper again and is a lifeloop session of
// its own.
type BackgroundRenewer interface {
	// StopBackground stops the background session whose harness session
	// id is session, for a person whose environment is env; it returns
	// once the harness says it stopped. It ends when ctx ends.
	StopBackground(ctx context.Context, env []string, session string) error
	// ResumeBackground asks the harness to continue session in the
	// background, in folder cwd, with prompt as its next prompt; it
	// returns once the harness took the request. It ends when ctx ends.
	ResumeBackground(ctx context.Context, env []string, cwd, session, prompt string) error
	// PromptDelivered reports whether the harness's own record of session
	// (its transcript) holds prompt as a person's prompt written at or
	// after since: the evidence that the continuation reached the
	// conversation.
	PromptDelivered(env []string, cwd, session, prompt string, since time.Time) bool
}

// BackgroundRenewer returns the harness's renewal of background sessions,
// or nil.
func (a *Adapter) BackgroundRenewer() BackgroundRenewer {
	r, _ := a.h.(BackgroundRenewer)
	return r
}
