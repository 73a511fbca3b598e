package codex

import (
	"reflect"
	"testing"
)

func TestTOMLString(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `""`},
		{`plain`, `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"l1\nl2\r\t", `"l1\nl2\r\t"`},
		{"\x00\x1f\x7f", `"\u0000\u001F\u007F"`},
		{"é€😀", `"é€😀"`},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := TOMLString(tt.in); got != tt.want {
				t.Errorf("TOMLString(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseCodexNotify(t *testing.T) {
	tests := []struct {
		name, toml string
		want       []string
		err        bool
	}{
		{"absent", "model = \"m\"\n", nil, false},
		{"basic", "model = \"m\"\nnotify = [\"notify-send\", \"--urgency=low\"]\n", []string{"notify-send", "--urgency=low"}, false},
		{"literal and multiline with comments", "notify = [\n  'py', # the program\n  \"a\\tb\\u00e9\",\n]\n[tui]\n", []string{"py", "a\tbé"}, false},
		{"only in a table", "[tui]\nnotify = [\"x\"]\n", nil, false},
		{"not an array", "notify = \"x\"\n", nil, true},
		{"unterminated", "notify = [\"x\"\n", nil, true},
		{"number inside", "notify = [1]\n", nil, true},
		{"notify_other key", "notifyx = [\"a\"]\n", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseNotify([]byte(tt.toml))
			if (err != nil) != tt.err || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, %v; want %q, err=%v", got, err, tt.want, tt.err)
			}
		})
	}
}

func FuzzParseCodexNotify(f *testing.F) {
	f.Add([]byte("notify = [\"a\", 'b']\n"))
	f.Fuzz(func(t *testing.T, in []byte) { _, _ = parseNotify(in) })
}
