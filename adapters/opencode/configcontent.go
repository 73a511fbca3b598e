package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// OPENCODE_CONFIG_CONTENT is one variable shared by the user's own inline
// configuration, the hook bridge's plugin (BridgeEnv) and the launch
// payload's instructions file (ExternalizePlacement). mergeConfig is the
// one place that composes them: lifeloop's entries are appended to the
// lists of the same keys, every other key of the user's keeps its value
// byte for byte, and a user's value that is not a JSON object (JSON with
// comments and trailing commas, as OpenCode reads it) is never replaced.

// errUserConfig says the user's OPENCODE_CONFIG_CONTENT cannot be merged.
var errUserConfig = errors.New(configVar + " in the environment is not a JSON object lifeloop can add to; left as it is")

// mergeConfig returns the configuration user ("" for none) with each
// list of add appended to the user's list of the same key (created when
// missing). The error wraps errUserConfig when user is not a JSON object
// or holds a non-list value for one of add's keys.
func mergeConfig(user string, add map[string][]string) (string, error) {
	doc := map[string]json.RawMessage{}
	if trimmed := bytes.TrimSpace([]byte(user)); len(trimmed) > 0 {
		if trimmed[0] != '{' {
			return "", errUserConfig
		}
		if json.Unmarshal(stripJSONC(trimmed), &doc) != nil {
			return "", errUserConfig // the parser's message would quote the value
		}
	}
	for key, values := range add {
		var list []json.RawMessage
		if have, ok := doc[key]; ok && !bytes.Equal(bytes.TrimSpace(have), []byte("null")) {
			if err := json.Unmarshal(have, &list); err != nil {
				return "", fmt.Errorf("%w: %q is not a list", errUserConfig, key)
			}
		}
		for _, v := range values {
			b, err := json.Marshal(v)
			if err != nil {
				return "", err
			}
			list = append(list, b)
		}
		b, err := json.Marshal(list)
		if err != nil {
			return "", err
		}
		doc[key] = b
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	return string(bytes.TrimSuffix(out.Bytes(), []byte("\n"))), nil
}
