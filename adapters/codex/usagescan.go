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

// readTokenCount reads payload.info's total_token_usage and
// last_token_usage of a line the rollout's parser read as a token_count,
// in one pass with s (nil: encoding/json only); where the pass cannot be sure of what encoding/json
// would store (a key it would match only by case, a key given twice, a
// value of another type, a broken line) the line is decoded with
// encoding/json, whose error is returned.
func readTokenCount(s *telemetry.JSONScan, line []byte, tc *tokenCount) error {
	*tc = tokenCount{}
	if s != nil && scanTokenCount(s, line, tc) {
		return nil
	}
	var c struct {
		Payload struct {
			Info struct {
				Total *tokenUsage `json:"total_token_usage"`
				Last  *tokenUsage `json:"last_token_usage"`
			} `json:"info"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(line, &c); err != nil {
		return err
	}
	*tc = tokenCount{}
	if t := c.Payload.Info.Total; t != nil {
		tc.total, tc.hasTotal = *t, true
	}
	if l := c.Payload.Info.Last; l != nil {
		tc.last, tc.hasLast = *l, true
	}
	return nil
}

var (
	payloadKey   = []string{"payload"}
	infoKey      = []string{"info"}
	tokenInfoKey = []string{"total_token_usage", "last_token_usage"}
	tokenKeys    = []string{"input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens"}
)

func scanTokenCount(s *telemetry.JSONScan, line []byte, tc *tokenCount) bool {
	s.Reset(line)
	if !s.Object() {
		return false
	}
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
			return false
		}
		var seenPl uint32
		for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
			if string(key) != "info" {
				s.UnreadKey(key, plain, infoKey)
				s.Skip()
				continue
			}
			s.Once(&seenPl, 1)
			if s.Null() {
				continue
			}
			if !s.Object() {
				return false
			}
			var seenInfo uint32
			for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
				switch string(key) {
				case "total_token_usage":
					s.Once(&seenInfo, 1)
					tc.hasTotal = scanTokenUsage(s, &tc.total)
				case "last_token_usage":
					s.Once(&seenInfo, 2)
					tc.hasLast = scanTokenUsage(s, &tc.last)
				default:
					s.UnreadKey(key, plain, tokenInfoKey)
					s.Skip()
				}
			}
		}
	}
	return s.End()
}

// scanTokenUsage reads a usage object into dst as encoding/json reads it
// into a *tokenUsage: false for null (a nil pointer), a field given null
// left at 0.
func scanTokenUsage(s *telemetry.JSONScan, dst *tokenUsage) bool {
	if s.Null() {
		return false
	}
	if !s.Object() {
		return false
	}
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "input_tokens":
			s.Once(&seen, 1)
			s.IntTo(&dst.Input)
		case "cached_input_tokens":
			s.Once(&seen, 2)
			s.IntTo(&dst.Cached)
		case "cache_write_input_tokens":
			s.Once(&seen, 4)
			s.IntTo(&dst.CacheWrite)
		case "output_tokens":
			s.Once(&seen, 8)
			s.IntTo(&dst.Output)
		case "reasoning_output_tokens":
			s.Once(&seen, 16)
			s.IntTo(&dst.Reasoning)
		default:
			s.UnreadKey(key, plain, tokenKeys)
			s.Skip()
		}
	}
	return true
}

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
