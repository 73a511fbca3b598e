package mockmodel

import "encoding/json"

// Pi (anthropic-messages provider) speaks the same Messages API as Claude
// Code but offers its tools in lower case: read, bash, edit, write.

// shellTool returns the name of the shell tool the request offers: "bash"
// when only Pi's lower-case tool is there, else Claude Code's "Bash".
func shellTool(tools []json.RawMessage) string {
	lower := false
	for _, raw := range tools {
		var t struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		switch t.Name {
		case "Bash":
			return "Bash"
		case "bash":
			lower = true
		}
	}
	if lower {
		return "bash"
	}
	return "Bash"
}
