package codex

import (
	"encoding/json"

	"github.com/lifeloop/lifeloop/telemetry"
)

// tokenCount is what a usage parser reads of a token_count line: its
// info's usage objects, nil where absent or null.
type tokenCount struct {
	total, last       tokenUsage
	hasTotal, hasLast bool
}

// readTokenCount decodes payload.info's total_token_usage and
// last_token_usage of a token_count line with encoding/json: for a line
// the rollout's parser could not read in its one pass (which reads them
// itself), or for the reference reading.
func readTokenCount(line []byte, tc *tokenCount) error {
	var c struct {
		Payload struct {
			Info struct {
				Total *tokenUsage `json:"total_token_usage"`
				Last  *tokenUsage `json:"last_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	*tc = tokenCount{}
	if err := json.Unmarshal(line, &c); err != nil {
		return err
	}
	if t := c.Payload.Info.Total; t != nil {
		tc.total, tc.hasTotal = *t, true
	}
	if l := c.Payload.Info.Last; l != nil {
		tc.last, tc.hasLast = *l, true
	}
	return nil
}

var payloadKey = []string{"payload"}

// readProvider reads a session_meta line's payload.model_provider as
// encoding/json would, in one pass with s where it can (nil:
// encoding/json only); false where encoding/json reports an error.
func readProvider(s *telemetry.JSONScan, line []byte) (string, bool) {
	if s != nil {
		if v, ok := scanProvider(s, line); ok {
			return v, true
		}
	}
	var m struct {
		Payload struct {
			Provider string `json:"model_provider"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &m) != nil {
		return "", false
	}
	return m.Payload.Provider, true
}

var providerKey = []string{"model_provider"}

func scanProvider(s *telemetry.JSONScan, line []byte) (string, bool) {
	s.Reset(line)
	if !s.Object() {
		return "", false
	}
	var v []byte
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		if string(key) != "payload" {
			s.UnreadKey(key, plain, payloadKey)
			s.Skip()
			continue
		}
		s.Once(&seen, 1)
		if s.Null() {
			continue
		}
		if !s.Object() {
			return "", false
		}
		var seenPl uint32
		for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
			if string(key) != "model_provider" {
				s.UnreadKey(key, plain, providerKey)
				s.Skip()
				continue
			}
			s.Once(&seenPl, 1)
			s.TextTo(&v)
		}
	}
	if !s.End() {
		return "", false
	}
	return string(v), true
}
