package gemini_test

import (
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
)

// TestRecognition: the command lines that start Gemini CLI resolve to it,
// including node running the installed bundle (what the npm .bin link
// points at) and the package run through npx; argument starts past the
// launcher.
func TestRecognition(t *testing.T) {
	r := builtin.Default()
	for _, argv := range [][]string{
		{"gemini", "-p", "hi"},
		{"/home/u/.npm-global/bin/gemini"},
		{"node", "/usr/lib/node_modules/@google/gemini-cli/bundle/gemini.js", "-m", "x"},
		{"npx", "@google/gemini-cli", "-p", "hi"},
		{"npx", "-y", "@google/gemini-cli@0.61.0"},
		{"env", "GEMINI_API_KEY=x", "gemini"},
	} {
		if a := r.Resolve(argv); a == nil || a.ID != "gemini" {
			t.Errorf("%q resolves to %v", argv, a)
		}
	}
}
