package kit

import (
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
)

// NewUUID returns a random (version 4) UUID, the session id a plug-in
// pins a launch to.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// OptionValue is the value of a parsed option: its next word, or what
// follows "=" in NAME=VALUE; "" when it has none.
func OptionValue(ca adapters.Arg) string {
	if len(ca.Words) == 2 {
		return ca.Words[1]
	}
	if _, v, ok := strings.Cut(ca.Words[0], "="); ok {
		return v
	}
	return ""
}
