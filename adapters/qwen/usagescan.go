package qwen

import "github.com/lifeloop/lifeloop/telemetry"

// apiFields are the fields of a ui_telemetry record the usage parser
// reads, as one pass over the line finds them (scanAPIResponse).
type apiFields struct {
	uuid, sessionID, timestamp, typ, subtype, cwd []byte
	hasEvent                                      bool // systemPayload.uiEvent is an object
	name, responseID, model                       []byte
	input, output, cached, thoughts, total        int64
}

// The names each object's reader takes: any other key that encoding/json
// would match to one of them only case-insensitively fails the scan.
var (
	recordKeys  = []string{"uuid", "sessionId", "timestamp", "type", "subtype", "cwd", "systemPayload"}
	payloadKeys = []string{"uiEvent"}
	eventKeys   = []string{"event.name", "response_id", "model", "input_token_count", "output_token_count", "cached_content_token_count", "thoughts_token_count", "total_token_count"}
)

// scanAPIResponse reads line's fields in one pass (telemetry.JSONScan);
// false when the scan gave up and encoding/json must decode the line
// (apiResponse) instead: the two read the same values.
func scanAPIResponse(line []byte, f *apiFields) bool {
	var s telemetry.JSONScan
	s.Reset(line)
	if !s.Object() {
		return false
	}
	var seen uint32
	for {
		key, plain, ok := s.Key()
		if !ok {
			break
		}
		switch string(key) {
		case "uuid":
			s.Once(&seen, 1)
			s.TextTo(&f.uuid)
		case "sessionId":
			s.Once(&seen, 2)
			s.TextTo(&f.sessionID)
		case "timestamp":
			s.Once(&seen, 4)
			s.TextTo(&f.timestamp)
		case "type":
			s.Once(&seen, 8)
			s.TextTo(&f.typ)
		case "subtype":
			s.Once(&seen, 16)
			s.TextTo(&f.subtype)
		case "cwd":
			s.Once(&seen, 32)
			s.TextTo(&f.cwd)
		case "systemPayload":
			s.Once(&seen, 64)
			scanPayload(&s, f)
		default:
			s.UnreadKey(key, plain, recordKeys)
			s.Skip()
		}
		if s.Bad {
			return false
		}
	}
	return !s.Bad && s.End()
}

// scanPayload reads systemPayload (an object or null).
func scanPayload(s *telemetry.JSONScan, f *apiFields) {
	if s.Peek() == 'n' {
		s.Null()
		return
	}
	if !s.Object() {
		return
	}
	var seen uint32
	for {
		key, plain, ok := s.Key()
		if !ok {
			return
		}
		if string(key) != "uiEvent" {
			s.UnreadKey(key, plain, payloadKeys)
			s.Skip()
			continue
		}
		s.Once(&seen, 1)
		if s.Peek() == 'n' {
			s.Null()
			continue
		}
		if !s.Object() {
			return
		}
		f.hasEvent = true
		scanEvent(s, f)
	}
}

// scanEvent reads the members of uiEvent (its '{' read).
func scanEvent(s *telemetry.JSONScan, f *apiFields) {
	var seen uint32
	for {
		key, plain, ok := s.Key()
		if !ok {
			return
		}
		switch string(key) {
		case "event.name":
			s.Once(&seen, 1)
			s.TextTo(&f.name)
		case "response_id":
			s.Once(&seen, 2)
			s.TextTo(&f.responseID)
		case "model":
			s.Once(&seen, 4)
			s.TextTo(&f.model)
		case "input_token_count":
			s.Once(&seen, 8)
			s.IntTo(&f.input)
		case "output_token_count":
			s.Once(&seen, 16)
			s.IntTo(&f.output)
		case "cached_content_token_count":
			s.Once(&seen, 32)
			s.IntTo(&f.cached)
		case "thoughts_token_count":
			s.Once(&seen, 64)
			s.IntTo(&f.thoughts)
		case "total_token_count":
			s.Once(&seen, 128)
			s.IntTo(&f.total)
		default:
			s.UnreadKey(key, plain, eventKeys)
			s.Skip()
		}
		if s.Bad {
			return
		}
	}
}
