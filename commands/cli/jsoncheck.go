package cli

import (
	"encoding/json"
	"strconv"
)

// maxJSONDepth is encoding/json's nesting limit: deeper documents are
// refused by every decoder lifeloop uses.
const maxJSONDepth = 10000

// notJSON says why data cannot be read as JSON ("" when it can): "is not
// JSON", or, for valid-looking JSON nested deeper than encoding/json
// reads, that it is too deep.
func notJSON(data []byte) string {
	if json.Valid(data) {
		return ""
	}
	if jsonDepth(data) > maxJSONDepth {
		return "is JSON nested more than " + strconv.Itoa(maxJSONDepth) + " levels deep, too deep to read"
	}
	return "is not JSON"
}

// jsonDepth is the deepest nesting of arrays and objects in data,
// brackets inside strings not counted.
func jsonDepth(data []byte) int {
	depth, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
			deepest = max(deepest, depth)
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
