package telemetrytest

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// Mutation says how MutateLine changes one line of a harness's files:
// the field names its parser reads, values to put in their place, and one
// change of the harness's own (returning the line changed, or as it was).
type Mutation struct {
	Keys   []string
	Values []string
	Own    func(line string) string
}

// MutateLine changes one line the ways real files and hostile ones can
// differ from the usual shape: keys in another case or escaped, fields
// twice, null or mistyped values, odd numbers, white space, cuts, stray
// bytes, a Kelvin sign that folds to 'k', the line wrapped in an array.
// The differential tests of the one-pass parsers run it against their
// reference parsers.
func MutateLine(l []byte, rng *rand.Rand, m Mutation) []byte {
	s := string(l)
	k := `"` + m.Keys[rng.IntN(len(m.Keys))] + `"`
	i := strings.Index(s, k+":")
	switch rng.IntN(14) {
	case 0:
		if i >= 0 {
			return []byte(s[:i+1] + strings.ToUpper(s[i+1:i+2]) + s[i+2:])
		}
	case 1:
		if i >= 0 {
			return []byte(s[:i+1] + `\u00` + fmt.Sprintf("%x", s[i+1]) + s[i+2:])
		}
	case 2:
		if i >= 0 {
			return []byte(s[:i] + k + `:null,` + s[i:])
		}
	case 3:
		if i >= 0 {
			j := i + len(k) + 1
			return []byte(s[:j] + m.Values[rng.IntN(len(m.Values))] + `,"zz` + s[j:])
		}
	case 4:
		if i >= 0 {
			j := i + len(k) + 1
			return []byte(s[:j] + " \t" + s[j:])
		}
	case 5:
		return []byte(s[:rng.IntN(len(s)+1)])
	case 6:
		j := rng.IntN(len(s) + 1)
		return []byte(s[:j] + string([]byte{byte(rng.IntN(256))}) + s[j:])
	case 7:
		return []byte(" " + s + " \r")
	case 8:
		if i >= 0 {
			return []byte(s[:i+1] + "\u212a" + s[i+1:]) // KELVIN SIGN
		}
	case 9:
		return []byte(m.Own(s))
	case 10:
		return []byte(`[` + s + `]`)
	case 11:
		return []byte(strings.Replace(s, `:`, `:[{"a":[1,2,{"b":null}]}],"q":`, 1))
	default:
		if i >= 0 { // the field twice, the first with another value
			dup := []string{`"dup"`, `7`, `{}`, `{"total_tokens":3,"input_tokens":4}`, `false`, `true`, `"tool_result"`, `[{"type":"text"}]`}
			return []byte(s[:i] + k + ":" + dup[rng.IntN(len(dup))] + "," + s[i:])
		}
	}
	return l
}
