package codex

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Codex reads TOML: its config.toml and every `-c key=value` override.
// lifeloop writes TOML strings into overrides and reads one key of the
// user's config.toml (notify), and nothing more.

// TOMLString renders s as a TOML basic string ("..."), escaping what TOML
// requires: quote, backslash, and every control character (including
// DEL). Invalid UTF-8 bytes become U+FFFD, as TOML text must be UTF-8.
func TOMLString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r == utf8.RuneError:
				b.WriteRune(utf8.RuneError)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// userNotify returns the user's own notify program from the config.toml
// of the harness environment env ($CODEX_HOME, else ~/.codex); nil when
// there is none or the file cannot be read or understood.
func userNotify(env []string) []string {
	home := envHome(env)
	if home == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(home, "config.toml"))
	if err != nil {
		return nil
	}
	user, _ := parseNotify(b)
	return user
}

// parseNotify returns the value of the top-level `notify` key of a Codex
// config.toml (an array of strings), or nil when there is none. Only that
// key is understood: basic and literal strings, arrays spread over several
// lines, comments. Keys inside [tables] are not top-level and are ignored.
func parseNotify(configTOML []byte) ([]string, error) {
	s := string(configTOML)
	i := 0
	for i < len(s) {
		// At the start of a line.
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && s[j] == '[' {
			return nil, nil // the first table: no more top-level keys
		}
		if strings.HasPrefix(s[j:], "notify") {
			k := j + len("notify")
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k < len(s) && s[k] == '=' {
				return parseStringArray(s[k+1:])
			}
		}
		nl := strings.IndexByte(s[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	return nil, nil
}

var errNotifyArray = errors.New("config.toml: notify is not an array of strings")

// parseStringArray parses a TOML array of strings at the start of s
// (after optional blanks).
func parseStringArray(s string) ([]string, error) {
	i := 0
	skip := func() {
		for i < len(s) {
			switch s[i] {
			case ' ', '\t', '\r', '\n':
				i++
			case '#':
				for i < len(s) && s[i] != '\n' {
					i++
				}
			default:
				return
			}
		}
	}
	skip()
	if i >= len(s) || s[i] != '[' {
		return nil, errNotifyArray
	}
	i++
	out := []string{}
	for {
		skip()
		if i >= len(s) {
			return nil, errNotifyArray
		}
		switch s[i] {
		case ']':
			return out, nil
		case '\'':
			end := strings.IndexAny(s[i+1:], "'\n")
			if end < 0 || s[i+1+end] != '\'' {
				return nil, errNotifyArray
			}
			out = append(out, s[i+1:i+1+end])
			i += end + 2
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' && s[j] != '\n' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) || s[j] != '"' {
				return nil, errNotifyArray
			}
			v, err := unquoteBasic(s[i : j+1])
			if err != nil {
				return nil, fmt.Errorf("%w: %w", errNotifyArray, err)
			}
			out = append(out, v)
			i = j + 1
		default:
			return nil, errNotifyArray
		}
		skip()
		if i < len(s) && s[i] == ',' {
			i++
		}
	}
}

// unquoteBasic decodes a TOML basic string (escapes \b \t \n \f \r \" \\
// \uXXXX \UXXXXXXXX).
func unquoteBasic(q string) (string, error) {
	body := q[1 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(body) {
			return "", errors.New("dangling escape")
		}
		switch body[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case '"':
			b.WriteByte('"')
		case '\\':
			b.WriteByte('\\')
		case 'u', 'U':
			n := 4
			if body[i] == 'U' {
				n = 8
			}
			if i+n >= len(body) {
				return "", errors.New("short unicode escape")
			}
			v, err := strconv.ParseUint(body[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", err
			}
			b.WriteRune(rune(v))
			i += n
		default:
			return "", fmt.Errorf("unknown escape \\%c", body[i])
		}
	}
	return b.String(), nil
}
