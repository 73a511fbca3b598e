package testharness

import (
	"strconv"
	"unicode/utf16"
)

// claudeProjectDirMax is the length past which Claude Code shortens a
// project folder name and appends a hash.
const claudeProjectDirMax = 200

// ClaudeProjectDirName returns the folder name Claude Code 2.1.197 uses
// under ~/.claude/projects for the working directory cwd (already
// resolved with realpath): every UTF-16 code unit outside [A-Za-z0-9]
// becomes '-', and names longer than 200 characters are cut and suffixed
// with "-" and a base-36 hash. See the package documentation.
func ClaudeProjectDirName(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	out := make([]byte, len(units))
	for i, u := range units {
		switch {
		case u >= 'a' && u <= 'z', u >= 'A' && u <= 'Z', u >= '0' && u <= '9':
			out[i] = byte(u)
		default:
			out[i] = '-'
		}
	}
	if len(out) <= claudeProjectDirMax {
		return string(out)
	}
	return string(out[:claudeProjectDirMax]) + "-" + strconv.FormatInt(abs64(int64(javaStringHash(units))), 36)
}

// javaStringHash is h = 31*h + unit over UTF-16 code units, wrapping at 32
// bits (JavaScript's `(h<<5)-h+c|0`).
func javaStringHash(units []uint16) int32 {
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	return h
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
