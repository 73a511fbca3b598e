package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// echoParser reports every line it is given as one observation carrying
// the line's text, so a test sees exactly which bytes Watch handed over.
type echoParser struct{}

func (echoParser) SourceKind() SourceKind { return SourceTranscript }

func (echoParser) Parse(dst []Observation, line []byte, src Provenance) ([]Observation, error) {
	if line[0] != '{' {
		return dst, ErrNotObject
	}
	return append(dst, Observation{Kind: ObsUsage, Detail: string(line), Source: src}), nil
}

// TestWatchBatchesKeepEveryLine feeds Watch (batched, arenas reused) a file
// of lines of every size — tiny, arena-sized, longer than an arena, longer
// than MaxLine, CRLF, unparseable — and checks that it delivers exactly
// what Tail (one fresh slice per line) delivers: the same lines with the
// same provenance and the same evidence. Under -race it also proves the
// tailer never writes an arena the watcher is still reading.
func TestWatchBatchesKeepEveryLine(t *testing.T) {
	const maxLine = tailArenaMax + 64<<10
	const lines = 6000
	rng := rand.New(rand.NewPCG(17, 17))
	var buf bytes.Buffer
	for i := range lines {
		var n int
		switch r := rng.IntN(100); {
		case r < 70:
			n = rng.IntN(300)
		case r < 95:
			n = rng.IntN(8 << 10)
		case r < 98:
			n = tailArenaMin + rng.IntN(tailArenaMax)
		default:
			n = maxLine - 100 + rng.IntN(200) // some over MaxLine
		}
		switch i % 50 {
		case 7:
			fmt.Fprintf(&buf, "not json %d\n", i)
		case 8:
			fmt.Fprintf(&buf, "{\"i\":%d,\"pad\":\"%s\"}\r\n", i, bytes.Repeat([]byte{'r'}, n))
		default:
			fmt.Fprintf(&buf, "{\"i\":%d,\"pad\":\"%s\"}\n", i, bytes.Repeat([]byte{byte('a' + i%26)}, n))
		}
	}
	path := filepath.Join(t.TempDir(), "big.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	// The reference: Tail, one line at a time, through the same parser.
	type rec struct {
		text       string
		line, off  int64
		invalid    int64
		overlong   int64
		sourceKind ObsKind
	}
	var want []rec
	var ev Evidence
	{
		ctx, cancel := context.WithCancel(context.Background())
		var p echoParser
		err := Tail(ctx, TailConfig{Path: path, FromStart: true, ForcePoll: true, SkipValidate: true, MaxLine: maxLine}, func(e TailEvent) {
			switch e.Kind {
			case EventLine:
				obs, err := p.Parse(nil, e.Line, Provenance{Line: e.LineNo, Offset: e.Offset})
				if err != nil {
					ev.InvalidLines++
				}
				for _, o := range obs {
					want = append(want, rec{o.Detail, e.LineNo, e.Offset, ev.InvalidLines, ev.OverlongLines, o.Kind})
					ev = Evidence{}
				}
			case EventOverlong:
				ev.OverlongLines++
			}
			if e.LineNo == lines {
				cancel()
			}
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(want) < 5000 || ev != (Evidence{}) {
		t.Fatalf("reference read %d lines, evidence left %+v", len(want), ev)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got []rec
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, WatchConfig{Path: path, NewParser: func() Parser { return echoParser{} },
			Tail: TailConfig{FromStart: true, ForcePoll: true, MaxLine: maxLine}}, func(o Observation) {
			if o.Kind != ObsUsage {
				return
			}
			got = append(got, rec{o.Detail, o.Source.Line, o.Source.Offset, o.Evidence.InvalidLines, o.Evidence.OverlongLines, o.Kind})
			if len(got) == len(want) {
				cancel()
			}
		})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Watch delivered %d lines, Tail %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			g, w := got[i], want[i]
			g.text, w.text = fmt.Sprintf("%d bytes %.40q", len(g.text), g.text), fmt.Sprintf("%d bytes %.40q", len(w.text), w.text)
			t.Fatalf("line %d differs:\n got %+v\nwant %+v", i, g, w)
		}
	}
}
