package ptyio

import "testing"

func TestReadyText(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   bool
	}{
		{"plain", []string{"> Type your message or @path"}, true},
		{"split across reads", []string{"> Type yo", "ur mess", "age"}, true},
		{"cursor moves between words", []string{"Type\x1b[1Cyour\x1b[38;5;8m\x1b[2;4Hmessage"}, true},
		{"inside an OSC title", []string{"\x1b]0;Type your message\x07", "nothing"}, false},
		{"OSC ended by ST", []string{"\x1b]0;x\x1b\\Type your message"}, true},
		{"not yet", []string{"Type your mess"}, false},
		{"other text", []string{"Ask anything", "Type your massage"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newReadyText("Type your message")
			got := false
			for _, c := range tc.chunks {
				got = r.feed([]byte(c))
			}
			if got != tc.want {
				t.Errorf("found %v, want %v", got, tc.want)
			}
		})
	}
	if newReadyText("  ") != nil {
		t.Error("a blank text is a ready text")
	}
}

func FuzzReadyText(f *testing.F) {
	f.Add([]byte("\x1b[2J> Type your message"), 3)
	f.Fuzz(func(t *testing.T, out []byte, cut int) {
		r := newReadyText("Type your message")
		if cut < 0 || cut > len(out) {
			cut = len(out) / 2
		}
		whole := newReadyText("Type your message").feed(out)
		r.feed(out[:cut])
		if split := r.feed(out[cut:]); split != whole {
			t.Errorf("split at %d: %v, whole: %v", cut, split, whole)
		}
	})
}
