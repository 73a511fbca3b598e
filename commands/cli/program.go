package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// findProgram returns the companion program name (lifeloop-otlp,
// lifeloop-top) to run: $envVar, else the one beside this executable,
// else the one on PATH.
func findProgram(e *env, name, envVar string) (string, error) {
	if p := e.Getenv(envVar); p != "" {
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s was found neither beside lifeloop nor on PATH (nor in $%s): install it with lifeloop (`make build` puts it beside lifeloop in bin/)", name, envVar)
}
