package ledger

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// FuzzLineReader feeds arbitrary ledger bytes to the line reader: lines
// must be exactly the newline-terminated pieces of the input, the tail the
// bytes after the last newline, and decoding must never panic. The same
// bytes as a file must read back consistently through ReadSince.
func FuzzLineReader(f *testing.F) {
	good := `{"schema_version":1,"receipt_id":"lfr_a","idempotency_key":null,"client_id":"c","adapter_id":"a","invocation_id":"inv_1","event":"supervisor.tick","event_id":"evt_1","sequence":1,"parent_receipt_id":null,"integration_mode":"launcher_wrapper","status":"observed","at_epoch_s":1,"failure_class":null,"retry_class":null}`
	f.Add([]byte(good+"\n"), uint8(0))
	f.Add([]byte(good+"\n"+good[:40]), uint8(1))
	f.Add([]byte("\n\n{}\nnot json\n"), uint8(2))
	f.Add([]byte(`{"sequence":3}`+"\n"+`{"sequence":2}`+"\n"), uint8(2))
	f.Add([]byte(`{"sequence":18446744073709551615}`+"\n"), uint8(200))
	f.Add([]byte(`{"seq\u0075ence":4,"client_id":"a\"b","idempotency_key":"k","telemetry_summary":{"sequence":9}}`+"\n"), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, since uint8) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			checkHeadAgainstJSON(t, line)
		}
		for _, oneByte := range []bool{false, true} {
			var r = bytes.NewReader(data)
			sc := newLineScannerSize(r, 0, 16)
			if oneByte {
				sc = newLineScannerSize(iotest.OneByteReader(bytes.NewReader(data)), 0, 16)
			}
			var rebuilt []byte
			for {
				ln, ok := sc.Next()
				if !ok {
					break
				}
				if ln.Offset != int64(len(rebuilt)) {
					t.Fatalf("line offset %d, want %d", ln.Offset, len(rebuilt))
				}
				if !ln.TooLong {
					rebuilt = append(append(rebuilt, ln.Data...), '\n')
					_, _ = decodeEntry(ln)
				} else {
					rebuilt = append(rebuilt, data[ln.Offset:ln.Offset+ln.Len]...)
				}
			}
			if sc.Err() != nil {
				t.Fatal(sc.Err())
			}
			complete := bytes.LastIndexByte(data, '\n') + 1
			if !bytes.Equal(rebuilt, data[:complete]) {
				t.Fatalf("lines do not rebuild the input")
			}
			if sc.Offset() != int64(complete) || sc.Tail() != int64(len(data)-complete) {
				t.Fatalf("offset %d tail %d, want %d and %d", sc.Offset(), sc.Tail(), complete, len(data)-complete)
			}
		}

		path := filepath.Join(t.TempDir(), "receipts.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		var prev uint64
		for e, err := range ReadSince(path, uint64(since)) {
			if err != nil {
				continue
			}
			if e.Sequence <= uint64(since) {
				t.Fatalf("ReadSince(%d) yielded sequence %d", since, e.Sequence)
			}
			_ = prev
			prev = e.Sequence
		}
		if _, err := Verify(path); err != nil {
			t.Fatal(err)
		}
	})
}

// checkHeadAgainstJSON compares parseHead with encoding/json on a valid
// JSON line (exact key matching, as a map decode does).
func checkHeadAgainstJSON(t *testing.T, line []byte) {
	if !json.Valid(line) {
		_, _ = parseHead(line)
		return
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		if _, err := parseHead(line); err == nil {
			t.Fatalf("parseHead accepted a non-object %q", line)
		}
		return
	}
	var want lineHead
	wantErr := false
	dec := func(key string, dst any) {
		if raw, ok := m[key]; ok && json.Unmarshal(raw, dst) != nil {
			wantErr = true
		}
	}
	dec("sequence", &want.Sequence)
	dec("receipt_id", &want.ReceiptID)
	dec("idempotency_key", &want.IdempotencyKey)
	dec("client_id", &want.ClientID)
	dec("adapter_id", &want.AdapterID)
	if want.Sequence == nil || *want.Sequence == 0 {
		wantErr = true
	}
	got, err := parseHead(line)
	if wantErr {
		if err == nil {
			t.Fatalf("parseHead(%q) = %+v, want an error", line, got)
		}
		return
	}
	if err != nil {
		t.Fatalf("parseHead(%q): %v", line, err)
	}
	same := *got.Sequence == *want.Sequence && got.ReceiptID == want.ReceiptID &&
		got.ClientID == want.ClientID && got.AdapterID == want.AdapterID &&
		(got.IdempotencyKey == nil) == (want.IdempotencyKey == nil) &&
		(got.IdempotencyKey == nil || *got.IdempotencyKey == *want.IdempotencyKey)
	if !same {
		t.Fatalf("parseHead(%q) = %+v, encoding/json says %+v", line, got, want)
	}
}
