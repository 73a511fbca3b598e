package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// HookArgs is what `lifeloop host-hook` hands a live `lifeloop run` over
// its control socket (launcher.OpHook).
type HookArgs struct {
	Adapter string `json:"adapter"`
	Hook    string `json:"hook"`
	// Stdin is the hook's stdin when it is JSON; StdinBase64 carries it
	// otherwise (so the wrapper can record a failed receipt).
	Stdin       json.RawMessage `json:"stdin,omitempty"`
	StdinBase64 string          `json:"stdin_base64,omitempty"`
	// Argv are the arguments after the flags (Codex notify passes its JSON
	// as the last one).
	Argv []string `json:"argv,omitempty"`
}

// HookReply is the live wrapper's answer to a HookArgs.
type HookReply struct {
	// AdditionalContext is the text to hand the harness (e.g. a rendered
	// {"payloads":[...]} transport envelope); "" for none.
	AdditionalContext string `json:"additional_context,omitempty"`
	// Receipts is how many receipts the wrapper recorded for the hook.
	Receipts int `json:"receipts"`
}

// CanInject reports whether hook's response can carry additional context
// into the model request (Claude and Codex: SessionStart and
// UserPromptSubmit).
func CanInject(adapterID, hook string) bool {
	if adapterID != AdapterClaude && adapterID != AdapterCodex {
		return false
	}
	return hook == SessionStart || hook == UserPromptSubmit
}

// Response renders the hook-protocol stdout for one hook call: the
// hookSpecificOutput object carrying additionalContext when there is
// context and the hook can inject it, else EmptyResponse.
func Response(adapterID, hook, additionalContext string) []byte {
	if additionalContext == "" || !CanInject(adapterID, hook) {
		return EmptyResponse(adapterID, hook)
	}
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{hook, additionalContext}})
	return b.Bytes()
}

// EmptyResponse is the response that changes nothing: an empty stdout,
// which Claude Code and Codex accept from a hook that exits 0.
func EmptyResponse(adapterID, hook string) []byte { return nil }

// CommandMarker is the text every hook command lifeloop installs for
// adapterID contains after the program name; host inspect and remove
// recognise lifeloop's entries by it.
func CommandMarker(adapterID string) string {
	return " host-hook --adapter " + adapterID + " --hook "
}

// Command renders the shell command line a settings file runs for hook:
// hookCommand (the lifeloop program and any leading arguments) followed by
// `host-hook --adapter ID --hook HOOK`, each word shell-quoted.
func Command(hookCommand []string, adapterID, hook string) string {
	words := make([]string, 0, len(hookCommand)+5)
	for _, w := range hookCommand {
		words = append(words, ShellQuote(w))
	}
	words = append(words, "host-hook", "--adapter", ShellQuote(adapterID), "--hook", ShellQuote(hook))
	return strings.Join(words, " ")
}

// ShellQuote quotes s for a POSIX shell: words made only of safe characters
// are left as they are, anything else is single-quoted.
func ShellQuote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		isSafe := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@%+,", r)
		if !isSafe {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ClaudeLaunchSettings renders a Claude Code settings file that adds, for
// one launch (`claude --settings FILE`), a command hook per event of
// Hooks("claude") running Command(hookCommand, "claude", event). Claude
// merges it with the user's own settings, whose hooks keep firing.
func ClaudeLaunchSettings(hookCommand []string) []byte {
	return launchSettings(hookCommand, AdapterClaude, "*")
}

// CodexHooksFile renders a Codex hooks.json with a command hook per event
// of Hooks("codex"). Codex runs hooks only when they are trusted.
func CodexHooksFile(hookCommand []string) []byte {
	return launchSettings(hookCommand, AdapterCodex, "")
}

func launchSettings(hookCommand []string, adapterID, matcher string) []byte {
	var b bytes.Buffer
	b.WriteString("{\n  \"hooks\": {")
	for i, h := range Hooks(adapterID) {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    " + jsonString(h) + ": [\n      {\n")
		if matcher != "" {
			b.WriteString("        \"matcher\": " + jsonString(matcher) + ",\n")
		}
		b.WriteString("        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": " +
			jsonString(Command(hookCommand, adapterID, h)) + "\n          }\n        ]\n      }\n    ]")
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}

// ClaudeLaunchArgs returns the Claude Code arguments that load a settings
// file for one launch.
func ClaudeLaunchArgs(settingsPath string) []string {
	return []string{"--settings", settingsPath}
}

// ChainFlag is the host-hook flag that names the user's own notify program
// (a JSON array of argv words); host-hook runs it with the notification
// appended, as Codex would have.
const ChainFlag = "--chain"

// CodexNotifyArgs returns the Codex arguments (`-c notify=[...]`) that make
// every turn completion call `host-hook --adapter codex --hook notify`.
// When the user has a notify program of their own (see ParseCodexNotify),
// it is passed along with ChainFlag so it still runs.
func CodexNotifyArgs(hookCommand []string, userNotify []string) []string {
	argv := append([]string{}, hookCommand...)
	argv = append(argv, "host-hook", "--adapter", AdapterCodex, "--hook", Notify)
	if len(userNotify) > 0 {
		chain, _ := json.Marshal(userNotify)
		argv = append(argv, ChainFlag, string(chain))
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		// A JSON string is a valid TOML basic string.
		words[i] = jsonString(w)
	}
	return []string{"-c", "notify=[" + strings.Join(words, ",") + "]"}
}

func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// ParseCodexNotify returns the value of the top-level `notify` key of a
// Codex config.toml (an array of strings), or nil when there is none. Only
// that key is understood: basic and literal strings, arrays spread over
// several lines, comments. Keys inside [tables] are not top-level and are
// ignored.
func ParseCodexNotify(configTOML []byte) ([]string, error) {
	s := string(configTOML)
	i := 0
	for i < len(s) {
		// At the start of a line.
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && s[j] == '[' {
			return nil, nil // the first table: no more top-level keys
		}
		if strings.HasPrefix(s[j:], "notify") {
			k := j + len("notify")
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k < len(s) && s[k] == '=' {
				return parseStringArray(s[k+1:])
			}
		}
		nl := strings.IndexByte(s[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return nil, nil
}

var errNotifyArray = errors.New("config.toml: notify is not an array of strings")

// parseStringArray parses a TOML array of strings at the start of s
// (after optional blanks).
func parseStringArray(s string) ([]string, error) {
	i := 0
	skip := func() {
		for i < len(s) {
			switch s[i] {
			case ' ', '\t', '\r', '\n':
				i++
			case '#':
				for i < len(s) && s[i] != '\n' {
					i++
				}
			default:
				return
			}
		}
	}
	skip()
	if i >= len(s) || s[i] != '[' {
		return nil, errNotifyArray
	}
	i++
	out := []string{}
	for {
		skip()
		if i >= len(s) {
			return nil, errNotifyArray
		}
		switch s[i] {
		case ']':
			return out, nil
		case '\'':
			end := strings.IndexAny(s[i+1:], "'\n")
			if end < 0 || s[i+1+end] != '\'' {
				return nil, errNotifyArray
			}
			out = append(out, s[i+1:i+1+end])
			i += end + 2
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' && s[j] != '\n' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) || s[j] != '"' {
				return nil, errNotifyArray
			}
			v, err := unquoteBasic(s[i : j+1])
			if err != nil {
				return nil, fmt.Errorf("%w: %w", errNotifyArray, err)
			}
			out = append(out, v)
			i = j + 1
		default:
			return nil, errNotifyArray
		}
		skip()
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

// unquoteBasic decodes a TOML basic string (escapes \b \t \n \f \r \" \\
// \uXXXX \UXXXXXXXX).
func unquoteBasic(q string) (string, error) {
	body := q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", errors.New("dangling escape")
		}
		switch body[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"':
			b.WriteByte('"')
		case '\\':
			b.WriteByte('\\')
		case 'u', 'U':
			n := 4
			if body[i] == 'U' {
				n = 8
			}
			if i+n >= len(body) {
				return "", errors.New("short unicode escape")
			}
			v, err := strconv.ParseUint(body[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", err
			}
			b.WriteRune(rune(v))
			i += n
		default:
			return "", fmt.Errorf("unknown escape \\%c", body[i])
		}
	}
	return b.String(), nil
}
