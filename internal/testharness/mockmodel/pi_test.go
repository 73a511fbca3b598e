package mockmodel

import (
	"encoding/json"
	"testing"
)

func TestShellTool(t *testing.T) {
	raw := func(names ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, n := range names {
			out = append(out, json.RawMessage(`{"name":"`+n+`","input_schema":{}}`))
		}
		return out
	}
	for _, tt := range []struct {
		tools []json.RawMessage
		want  string
	}{
		{raw("read", "bash", "edit", "write"), "bash"},
		{raw("Bash", "Read"), "Bash"},
		{raw("read_file", "run_shell_command"), "run_shell_command"},
		{raw("Read"), "Bash"},
		{nil, "Bash"},
	} {
		if got := shellTool(tt.tools); got != tt.want {
			t.Errorf("shellTool(%s) = %s, want %s", tt.tools, got, tt.want)
		}
	}
}
