package telemetry

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// recordStore is a RecordSource over an in-memory list of records: one
// session, "store#s1", born now.
type recordStore struct {
	born    time.Time
	records [][]byte
}

func (s *recordStore) Roots() []string        { return nil }
func (s *recordStore) SourceKind() SourceKind { return "store" }
func (s *recordStore) Candidates() ([]Candidate, error) {
	return []Candidate{{Path: "store#s1", Born: s.born, SessionID: "s1"}}, nil
}

func (s *recordStore) Follow(ctx context.Context, cfg TailConfig, sink func(TailEvent)) error {
	if cfg.Path != "store#s1" {
		sink(TailEvent{Kind: EventError, Err: context.Canceled})
		return nil
	}
	sink(TailEvent{Kind: EventMode, Mode: ModePoll})
	for i, r := range s.records {
		sink(TailEvent{Kind: EventLine, Line: r, LineNo: int64(i + 1), Offset: int64(i)})
	}
	<-ctx.Done()
	return nil
}

// usageParser reads {"tokens":N,"window":W} records as usage.
type usageParser struct{}

func (usageParser) SourceKind() SourceKind { return "store" }
func (usageParser) Parse(dst []Observation, line []byte, src Provenance) ([]Observation, error) {
	var r struct{ Tokens, Window int64 }
	if err := json.Unmarshal(line, &r); err != nil {
		return dst, err
	}
	return append(dst, Observation{Kind: ObsUsage, Tokens: r.Tokens, Window: r.Window, Source: src}), nil
}

// TestWatchRecordSource: a discoverer that is a RecordSource is followed
// through its own Follow, not the file tailer; its records are parsed,
// counted as evidence when unusable, and turned into pressure.
func TestWatchRecordSource(t *testing.T) {
	store := &recordStore{born: time.Now(), records: [][]byte{
		[]byte(`{"tokens":10,"window":100}`),
		[]byte(`not json`),
		[]byte(`{"tokens":80,"window":100}`),
	}}
	r := startWatch(t, WatchConfig{Discoverer: store, NewParser: func() Parser { return usageParser{} }})
	found := r.kind(ObsSourceFound)
	if found.Source.Path != "store#s1" || found.Source.Kind != "store" {
		t.Errorf("source found %+v", found.Source)
	}
	u := r.until("usage 80", func(o Observation) bool { return o.Kind == ObsUsage && o.Tokens == 80 })
	if u.Source.Line != 3 || u.Source.Offset != 2 || u.Source.Path != "store#s1" || u.Evidence.InvalidLines != 1 {
		t.Errorf("usage %+v", u)
	}
	p := r.kind(ObsPressure)
	if p.Level != LevelHigh || p.Previous != LevelLow || p.Tokens != 80 {
		t.Errorf("pressure %+v", p)
	}
}
