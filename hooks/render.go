package hooks

import (
	"bytes"
	"encoding/json"
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
	// Argv are the arguments after the flags (a custom hook passes its JSON
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
	// Response is the hook's output as the harness reads it (Response of
	// the adapter's Spec with AdditionalContext); "" for none.
	Response string `json:"response,omitempty"`
}

// Response renders the hook-protocol stdout for one hook call: the
// hookSpecificOutput object carrying additionalContext when there is
// context and the hook can inject it (a flat {"additionalContext": ...}
// for a spec with FlatResponse), else EmptyResponse.
func Response(spec *Spec, hook, additionalContext string) []byte {
	if additionalContext == "" || !spec.CanInject(hook) {
		return EmptyResponse()
	}
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if spec.FlatResponse {
		_ = enc.Encode(struct {
			AdditionalContext string `json:"additionalContext"`
		}{additionalContext})
		return b.Bytes()
	}
	_ = enc.Encode(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{hook, additionalContext}})
	return b.Bytes()
}

// EmptyResponse is the response that changes nothing: an empty stdout,
// which a command hook that exits 0 may always give.
func EmptyResponse() []byte { return nil }

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

// HTTPTarget is where a live `lifeloop run` takes hook calls over HTTP:
// the harness posts a hook's JSON to URL/<adapter>/<hook> with the
// bearer Token, and the answer's body is the hook's response, as a
// program's stdout would be. No process is started per call.
type HTTPTarget struct {
	URL   string
	Token string
}

// HTTPTimeoutSeconds bounds one HTTP hook call on the harness's side;
// the wrapper answers well within it.
const HTTPTimeoutSeconds = 5

// SettingsFile renders a settings file with one hook per hook of spec
// (in order): a command hook running Command(hookCommand, spec.Adapter,
// hook), or, when http is set and the hook is not CommandOnly, an HTTP
// hook posting to http:
//
//	{"hooks":{"Event":[{"matcher":"*","hooks":[{"type":"command","command":"..."}]}]}}
//	{"hooks":{"Event":[{"matcher":"*","hooks":[{"type":"http","url":"...","headers":{...},"timeout":5}]}]}}
//
// with "matcher" only when spec.Matcher is set.
func SettingsFile(spec *Spec, hookCommand []string, http *HTTPTarget) []byte {
	adapterID, matcher := spec.Adapter, spec.Matcher
	var b bytes.Buffer
	b.WriteString("{\n  \"hooks\": {")
	for i, h := range spec.Hooks {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    " + JSONString(h.Name) + ": [\n      {\n")
		if matcher != "" {
			b.WriteString("        \"matcher\": " + JSONString(matcher) + ",\n")
		}
		b.WriteString("        \"hooks\": [\n          {\n")
		if http != nil && !h.CommandOnly {
			b.WriteString("            \"type\": \"http\",\n" +
				"            \"url\": " + JSONString(http.URL+"/"+adapterID+"/"+h.Name) + ",\n" +
				"            \"headers\": {\"Authorization\": " + JSONString("Bearer "+http.Token) + "},\n" +
				"            \"timeout\": " + strconv.Itoa(HTTPTimeoutSeconds) + "\n")
		} else {
			b.WriteString("            \"type\": \"command\",\n" +
				"            \"command\": " + JSONString(Command(hookCommand, adapterID, h.Name)) + "\n")
		}
		b.WriteString("          }\n        ]\n      }\n    ]")
	}
	b.WriteString("\n  }\n}\n")
	return b.Bytes()
}

// ChainFlag is the host-hook flag that names the user's own program for
// the same hook (a JSON array of argv words); host-hook runs it with the
// call's arguments appended, as the harness would have (Custom.ChainsUser).
const ChainFlag = "--chain"

// JSONString renders s as a JSON string (no HTML escaping); a JSON
// string is also a valid TOML basic string.
func JSONString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
