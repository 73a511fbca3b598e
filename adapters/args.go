package adapters

import "strings"

// Arity is how many words follow a command-line option.
type Arity int

const (
	FlagOnly Arity = iota // no value
	Required              // exactly one
	Optional              // one unless the next word is an option
	Variadic              // every word up to the next option
)

// Arg is one parsed command-line argument: an option with its values, or
// a positional word.
type Arg struct {
	Words      []string
	Option     string // "" for a positional
	Positional bool
}

// ScanArgs splits args into options (with their values) and positionals
// the way Commander and yargs read them: "--" ends the options, "-" is a
// positional, NAME=VALUE carries its own value, and arityOf says how many
// words follow any other option NAME.
func ScanArgs(args []string, arityOf func(name string) Arity) []Arg {
	var out []Arg
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for _, rest := range args[i:] {
				out = append(out, Arg{Words: []string{rest}, Positional: rest != "--"})
			}
			return out
		case strings.HasPrefix(a, "-") && a != "-":
			name, _, inline := strings.Cut(a, "=")
			ca := Arg{Words: []string{a}, Option: name}
			if !inline {
				switch arityOf(name) {
				case Required:
					if i+1 < len(args) {
						i++
						ca.Words = append(ca.Words, args[i])
					}
				case Optional:
					if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						ca.Words = append(ca.Words, args[i])
					}
				case Variadic:
					for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						ca.Words = append(ca.Words, args[i])
					}
				}
			}
			out = append(out, ca)
		default:
			out = append(out, Arg{Words: []string{a}, Positional: true})
		}
	}
	return out
}

// IsUUID reports whether s is a UUID in its 8-4-4-4-12 hex spelling.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
