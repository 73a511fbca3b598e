package topview

import (
	"strings"
	"unicode"
)

// The table measures text in terminal cells without a terminal library:
// a combining mark or format character takes none, an East Asian wide
// or fullwidth character (CJK, Hangul, fullwidth forms, most emoji) two,
// anything else one. Text is measured rune by rune, not by grapheme
// cluster: a joined emoji sequence counts as its parts.

// runeWidth is the cells r takes.
func runeWidth(r rune) int {
	switch {
	case r == 0 || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) || unicode.Is(unicode.Cf, r):
		return 0
	case unicode.IsControl(r):
		return 0
	case wide(r):
		return 2
	}
	return 1
}

// wide reports whether r is East Asian wide or fullwidth.
func wide(r rune) bool {
	switch {
	case r < 0x1100:
		return false
	case r <= 0x115F, // Hangul Jamo initials
		r >= 0x2E80 && r <= 0x303E, // CJK radicals, punctuation
		r >= 0x3041 && r <= 0x33FF, // kana, CJK symbols
		r >= 0x3400 && r <= 0x4DBF, // CJK extension A
		r >= 0x4E00 && r <= 0x9FFF, // CJK unified ideographs
		r >= 0xA000 && r <= 0xA4CF, // Yi
		r >= 0xAC00 && r <= 0xD7A3, // Hangul syllables
		r >= 0xF900 && r <= 0xFAFF, // CJK compatibility ideographs
		r >= 0xFE30 && r <= 0xFE4F, // CJK compatibility forms
		r >= 0xFF00 && r <= 0xFF60, // fullwidth forms
		r >= 0xFFE0 && r <= 0xFFE6,
		r >= 0x1F300 && r <= 0x1F64F, // pictographs, emoticons
		r >= 0x1F900 && r <= 0x1F9FF,
		r >= 0x20000 && r <= 0x3FFFD: // CJK extensions B and on
		return true
	}
	return false
}

// Width is the cells s takes (s holds no escape sequences).
func Width(s string) int {
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

// Fit pads or cuts s to exactly w cells, ending a cut with "…".
func Fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	n := Width(s)
	if n > w {
		s = truncate(s, w-1) + "…"
		n = Width(s)
	}
	return s + strings.Repeat(" ", w-n)
}

// cut cuts s to exactly w cells, with no mark.
func cut(s string, w int) string {
	s = truncate(s, w)
	return s + strings.Repeat(" ", w-Width(s))
}

// truncate keeps the first runes of s that fit in w cells.
func truncate(s string, w int) string {
	n := 0
	for i, r := range s {
		if n+runeWidth(r) > w {
			return s[:i]
		}
		n += runeWidth(r)
	}
	return s
}

// TruncateLeft drops the first n cells of s and puts prefix before the
// rest.
func TruncateLeft(s string, n int, prefix string) string {
	dropped := 0
	for i, r := range s {
		if dropped >= n {
			return prefix + s[i:]
		}
		dropped += runeWidth(r)
	}
	return prefix
}
