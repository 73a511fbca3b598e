package claude

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

var _ adapters.ProcessWrapperInstaller = Harness{}

// InstallWrapper implements adapters.ProcessWrapperInstaller: the key
// processWrapper of the user's settings.json ($CLAUDE_CONFIG_DIR, else
// ~/.claude; Claude ignores it in project settings), set to lifeloop's
// prefix, chaining the value it had; removing puts that value back or
// deletes the key. The value is a string, as Claude takes it (an array
// there is not honoured: measured with 2.1.332): the words joined by
// blanks, or a JSON array's text when a word has a blank or a quote. The
// other keys keep their order and text.
func (Harness) InstallWrapper(env []string, w adapters.WrapperInstall) (string, bool, error) {
	dir, err := configDir(env)
	if err != nil {
		return "", false, err
	}
	path := filepath.Join(dir, "settings.json")
	keys, err := readSettingsKeys(path)
	if err != nil {
		return path, false, err
	}
	at := slices.IndexFunc(keys, func(k settingsKey) bool { return k.Name == processWrapperKey })
	var current []string
	if at >= 0 {
		v := string(keys[at].Raw)
		var s string
		if json.Unmarshal(keys[at].Raw, &s) == nil {
			v = s
		}
		if current, err = ParseProcessWrapper(v); err != nil {
			return path, false, fmt.Errorf("%s: %s: %w; fix it first", path, processWrapperKey, err)
		}
	}
	chain, ours := w.Unchain(current)
	if !ours {
		chain = current
	}
	var want []string
	if !w.Remove {
		want = w.Prefix(chain)
	} else if ours {
		want = chain
	} else {
		return path, false, nil // not lifeloop's: nothing to remove
	}
	if slices.Equal(want, current) {
		return path, false, nil
	}
	switch {
	case len(want) == 0 && at >= 0:
		keys = slices.Delete(keys, at, at+1)
	case len(want) > 0:
		raw, _ := json.Marshal(wrapperText(want))
		if at >= 0 {
			keys[at].Raw = raw
		} else {
			keys = append(keys, settingsKey{Name: processWrapperKey, Raw: raw})
		}
	}
	if err := os.MkdirAll(dir, kit.DirPerm); err != nil {
		return path, false, err
	}
	return path, true, kit.WriteFileAtomic(path, writeSettingsKeys(keys))
}

// settingsKey is one top-level key of a settings file and its value's
// text as written.
type settingsKey struct {
	Name string
	Raw  json.RawMessage
}

// readSettingsKeys reads the top-level keys of a JSON object file in
// order; a missing file has none.
func readSettingsKeys(path string) ([]settingsKey, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("%s is not a JSON object", path)
	}
	var keys []settingsKey
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		name, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		keys = append(keys, settingsKey{Name: name, Raw: raw})
	}
	return keys, nil
}

// writeSettingsKeys writes keys as a JSON object, one key a line.
func writeSettingsKeys(keys []settingsKey) []byte {
	var b bytes.Buffer
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		name, _ := json.Marshal(k.Name)
		fmt.Fprintf(&b, "\n  %s: %s", name, k.Raw)
	}
	if len(keys) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// wrapperText is words as a process-wrapper string Claude parses back
// into them (ParseProcessWrapper).
func wrapperText(words []string) string {
	plain := true
	for _, w := range words {
		if strings.ContainsAny(w, " \t\n\"[") {
			plain = false
		}
	}
	if plain {
		return strings.Join(words, " ")
	}
	b, _ := json.Marshal(words)
	return string(b)
}
