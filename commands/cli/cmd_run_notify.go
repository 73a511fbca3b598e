package cli

import (
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/notify"
)

// notifyOptions are run's --notify flags: who is told when the session
// waits for a person (docs/notify.md). Each is also a setting every
// session reads from its environment variable.
type notifyOptions struct {
	Command string
	Webhook string
	Secret  string
	Desktop bool
	On      string
}

func notifyFlags(o *notifyOptions) []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "notify", EnvVars: []string{"LIFELOOP_NOTIFY"}, Destination: &o.Command,
			Usage: "run the shell command `CMD` once each time the session starts waiting for a person (a permission dialog, a question, a finished turn, an error), without the terminal, with the facts in $LIFELOOP_SESSION_ID, $LIFELOOP_HARNESS, $LIFELOOP_CWD, $LIFELOOP_ATTENTION (the kind), $LIFELOOP_ATTENTION_SINCE, _DETAIL, _SOURCE, _EPISODE; its output goes to the session folder's notify.log (docs/notify.md)"},
		&ucli.StringFlag{Name: "notify-webhook", EnvVars: []string{"LIFELOOP_NOTIFY_WEBHOOK"}, Destination: &o.Webhook,
			Usage: "post a JSON document (" + notify.Schema + ") to `URL` when an episode of waiting opens and when it closes, signed with --notify-secret"},
		&ucli.StringFlag{Name: "notify-secret", EnvVars: []string{"LIFELOOP_NOTIFY_SECRET"}, Destination: &o.Secret,
			Usage: "sign --notify-webhook posts with `SECRET` (X-Lifeloop-Signature: HMAC-SHA256 of timestamp.body); prefer $LIFELOOP_NOTIFY_SECRET: a secret on the command line is visible to every local user in ps"},
		&ucli.BoolFlag{Name: "notify-desktop", EnvVars: []string{"LIFELOOP_NOTIFY_DESKTOP"}, Destination: &o.Desktop,
			Usage: "show a desktop notification when an episode of waiting opens (notify-send on Linux, osascript on macOS, when found on PATH)"},
		&ucli.StringFlag{Name: "notify-on", EnvVars: []string{"LIFELOOP_NOTIFY_ON"}, Destination: &o.On,
			Usage: "announce only these `KINDS` of waiting (comma-separated: needs_permission, needs_answer, waiting_for_input, stopped_on_error; default: all)"},
	}
}

// config checks the flags (usage errors, before anything starts) and
// returns the launcher's notify.Config; environ is what the command
// starts from.
func (o notifyOptions) config(environ []string) (notify.Config, error) {
	kinds, err := notify.ParseKinds(o.On)
	if err != nil {
		return notify.Config{}, usageErrorf("--notify-on: %v", err)
	}
	if o.Webhook != "" {
		if err := notify.CheckURL(o.Webhook); err != nil {
			return notify.Config{}, usageErrorf("--notify-webhook: %v", err)
		}
	}
	return notify.Config{Command: o.Command, WebhookURL: o.Webhook, WebhookSecret: o.Secret, Desktop: o.Desktop,
		Kinds: kinds, Env: environ}, nil
}

// withoutNotifySecret is environ without the webhook's secret: the
// harness, its hooks and its tools have no use for it.
func withoutNotifySecret(environ []string) []string {
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, notify.EnvSecret+"=")
	})
}
