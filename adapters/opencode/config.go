package opencode

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/lifeloop/lifeloop/adapters"
)

// Context windows. OpenCode stores no window in its database: a model's
// limit.context comes from its configuration (a provider's models in
// opencode.json) over the models.dev catalog it caches. The TUI's
// "Context … % used" is the last assistant message's tokens.total against
// that limit, and lifeloop uses the same: the window is limit.context.
// (OpenCode compacts earlier, at limit.context minus the model's output
// limit, or limit.input minus compaction.reserved.)
//
// The configuration is read as OpenCode 1.18 merges it, later over
// earlier: the models.dev cache ($XDG_CACHE_HOME/opencode/models.json),
// the global config folder ($XDG_CONFIG_HOME/opencode: config.json,
// opencode.json, opencode.jsonc), $OPENCODE_CONFIG, opencode.json(c) and
// .opencode/opencode.json(c) from the filesystem root down to the working
// folder, then $OPENCODE_CONFIG_CONTENT. Not followed: {env:…} and
// {file:…} substitutions in limit values, and remote (.well-known)
// configuration.

// windows maps "provider/model" to limit.context.
type windows map[string]int64

func (w windows) window(provider, model string) int64 { return w[provider+"/"+model] }

// loadWindows reads every configured limit.context for env and cwd.
func loadWindows(env []string, cwd string) windows {
	w := windows{}
	cache := adapters.EnvValue(env, "XDG_CACHE_HOME")
	if cache == "" {
		if h := adapters.EnvValue(env, "HOME"); h != "" {
			cache = filepath.Join(h, ".cache")
		}
	}
	if cache != "" {
		w.addCatalog(filepath.Join(cache, "opencode", "models.json"))
	}
	cfgHome := adapters.EnvValue(env, "XDG_CONFIG_HOME")
	if cfgHome == "" {
		if h := adapters.EnvValue(env, "HOME"); h != "" {
			cfgHome = filepath.Join(h, ".config")
		}
	}
	if cfgHome != "" {
		for _, n := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
			w.addConfigFile(filepath.Join(cfgHome, "opencode", n))
		}
	}
	if p := adapters.EnvValue(env, "OPENCODE_CONFIG"); p != "" {
		w.addConfigFile(p)
	}
	if cwd != "" {
		var dirs []string
		for d := filepath.Clean(cwd); ; d = filepath.Dir(d) {
			dirs = append(dirs, d)
			if filepath.Dir(d) == d {
				break
			}
		}
		for i := len(dirs) - 1; i >= 0; i-- {
			for _, n := range []string{"opencode.json", "opencode.jsonc", filepath.Join(".opencode", "opencode.json"), filepath.Join(".opencode", "opencode.jsonc")} {
				w.addConfigFile(filepath.Join(dirs[i], n))
			}
		}
	}
	if c := adapters.EnvValue(env, "OPENCODE_CONFIG_CONTENT"); c != "" {
		w.addConfig([]byte(c))
	}
	return w
}

type modelLimit struct {
	Limit struct {
		Context json.Number `json:"context"`
	} `json:"limit"`
}

func (w windows) set(provider, model string, m modelLimit) {
	if n, err := m.Limit.Context.Int64(); err == nil && n > 0 {
		w[provider+"/"+model] = n
	}
}

func (w windows) addConfigFile(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	w.addConfig(b)
}

// addConfig reads provider.<id>.models.<id>.limit.context of one
// configuration document (JSON with comments and trailing commas).
func (w windows) addConfig(b []byte) {
	var c struct {
		Provider map[string]struct {
			Models map[string]modelLimit `json:"models"`
		} `json:"provider"`
	}
	if json.Unmarshal(stripJSONC(b), &c) != nil {
		return
	}
	for p, prov := range c.Provider {
		for m, ml := range prov.Models {
			w.set(p, m, ml)
		}
	}
}

// addCatalog reads the models.dev catalog: {provider: {models: {id: {limit}}}}.
func (w windows) addCatalog(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var c map[string]struct {
		Models map[string]modelLimit `json:"models"`
	}
	if json.Unmarshal(b, &c) != nil {
		return
	}
	for p, prov := range c {
		for m, ml := range prov.Models {
			w.set(p, m, ml)
		}
	}
}

// stripJSONC removes // and /* */ comments and trailing commas outside
// strings, leaving plain JSON.
func stripJSONC(in []byte) []byte {
	out := make([]byte, 0, len(in))
	inStr, esc := false, false
	for i := 0; i < len(in); i++ {
		c := in[i]
		if inStr {
			out = append(out, c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch {
		case c == '"':
			inStr = true
			out = append(out, c)
		case c == '/' && i+1 < len(in) && in[i+1] == '/':
			for i < len(in) && in[i] != '\n' {
				i++
			}
			if i < len(in) {
				out = append(out, '\n')
			}
		case c == '/' && i+1 < len(in) && in[i+1] == '*':
			i += 2
			for i+1 < len(in) && (in[i] != '*' || in[i+1] != '/') {
				i++
			}
			i++
		case c == ']' || c == '}':
			// Drop a comma that only whitespace separates from the closer.
			j := len(out) - 1
			for j >= 0 && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j--
			}
			if j >= 0 && out[j] == ',' {
				out = append(out[:j], out[j+1:]...)
			}
			out = append(out, c)
		default:
			out = append(out, c)
		}
	}
	return out
}
