package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/gemini"
)

// BenchmarkWatchCatchUpGemini measures `lifeloop watch --adapter gemini
// FILE` catching up on a large Gemini CLI chat file that already exists,
// as BenchmarkWatchCatchUp does for Claude: the file is read from its
// start; its last turn follows a {"$set":{"sessionId":…}} naming a second
// session, so lifeloop records a second binding receipt only once it has
// parsed the file to its end, and the benchmark fails when that receipt is
// missing or points elsewhere. Sizes in MiB come from
// LIFELOOP_BENCH_TRANSCRIPT_MIB (default 64). ns/op and MB/s are the
// catch-up time, from launching lifeloop until that receipt reaches its
// --events fd; wall-s is the whole run (with the --until-idle wait),
// cpu-s its user+system time, peak-RSS-MiB its own Maxrss (measure).
func BenchmarkWatchCatchUpGemini(b *testing.B) {
	sizes := os.Getenv("LIFELOOP_BENCH_TRANSCRIPT_MIB")
	if sizes == "" {
		sizes = "64"
	}
	for _, s := range strings.Split(sizes, ",") {
		mib, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || mib <= 0 {
			b.Fatalf("LIFELOOP_BENCH_TRANSCRIPT_MIB: %q is not a size in MiB", s)
		}
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			fx := writeGeminiChat(b, int64(mib)<<20)
			benchGeminiCatchUp(b, fx)
		})
	}
}

func benchGeminiCatchUp(b *testing.B, fx *catchUpFixture) {
	ll := lifeloopBin(b)
	const idle = 500 * time.Millisecond
	var catchUp, wall, cpu time.Duration
	var peak int64
	n := 0
	for b.Loop() {
		state := filepath.Join(b.TempDir(), "state")
		evr, evw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.CommandContext(b.Context(), ll, "watch", "--state-dir", state, "--adapter", "gemini", "--cwd", fx.cwd,
			"--until-idle", idle.String(), "--events", "fd:3", fx.path)
		cmd.Env = append(os.Environ(), "HOME="+fx.home)
		cmd.ExtraFiles = []*os.File{evw}
		usage := measure(b, cmd)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		err = cmd.Start()
		evw.Close()
		if err != nil {
			evr.Close()
			b.Fatal(err)
		}
		type binding struct {
			at     time.Time
			offset float64
		}
		got := make(chan []binding, 1)
		go func() {
			defer evr.Close()
			var bs []binding
			sc := bufio.NewScanner(evr)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				at := time.Now()
				var r struct {
					Event   string         `json:"event"`
					Summary map[string]any `json:"telemetry_summary"`
				}
				if json.Unmarshal(sc.Bytes(), &r) == nil && r.Event == "session.started" && r.Summary["binding"] == "harness_session_id" {
					off, _ := r.Summary["offset"].(float64)
					bs = append(bs, binding{at, off})
				}
			}
			got <- bs
		}()
		err = cmd.Wait()
		end := time.Now()
		bs := <-got
		if err != nil {
			b.Fatalf("lifeloop watch: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
		}
		if len(bs) != 2 || int64(bs[1].offset) != fx.lastSessionOffset {
			b.Fatalf("want two bindings, the last at offset %d: got %+v; the file was not read to its end", fx.lastSessionOffset, bs)
		}
		catchUp += bs[1].at.Sub(start)
		wall += end.Sub(start)
		c, rss := usage()
		cpu += c
		peak = max(peak, rss)
		n++
	}
	perOp := catchUp / time.Duration(n)
	b.ReportMetric(float64(perOp.Nanoseconds()), "ns/op")
	b.ReportMetric(float64(fx.size)/1e6/perOp.Seconds(), "MB/s")
	b.ReportMetric((wall / time.Duration(n)).Seconds(), "wall-s")
	b.ReportMetric((cpu / time.Duration(n)).Seconds(), "cpu-s")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
}

// writeGeminiChat streams a Gemini CLI chat file of at least size bytes
// at <home>/.gemini/tmp/project/chats/, shaped like 0.61.0's: a header,
// the session context as {"$set":{"messages":[…]}}, then turns of a
// prompt record, a model record with tokens written again with its
// toolCalls (and the tool's output) once the tool ran, the function
// response, and the answer, each followed by a $set lastUpdated; the
// context grows each turn and is compressed (history replaced by a $set
// messages, and the CLI's "Context compressed" notice) near 500k tokens.
// The last turn follows a $set naming a second session id.
func writeGeminiChat(b *testing.B, size int64) *catchUpFixture {
	b.Helper()
	dir := b.TempDir()
	fx := &catchUpFixture{home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "project")}
	chats := filepath.Join(fx.home, ".gemini", "tmp", "project", "chats")
	for _, d := range []string{chats, fx.cwd} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	session := genUUID(0x6e55)
	fx.path = filepath.Join(chats, "session-2026-11-01T08-00-"+session[:8]+".jsonl")
	f, err := os.OpenFile(fx.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	line := func(v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		raw = append(raw, '\n')
		_, _ = w.Write(raw)
		written += int64(len(raw))
	}
	at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	ts := func() string { at = at.Add(700 * time.Millisecond); return at.Format("2006-01-02T15:04:05.000Z") }
	var seq uint64
	id := func() string { seq++; return genUUID(seq) }
	touch := func() { line(map[string]any{"$set": map[string]any{"lastUpdated": ts()}}) }
	sessionContext := map[string]any{"id": "d04923d38bb0f6017037e74183378ef4", "timestamp": ts(), "type": "user",
		"content": []any{map[string]any{"text": "<session_context>\n" + genText[:1500] + "\n</session_context>"}}}
	line(map[string]any{"sessionId": session, "projectHash": gemini.ProjectHash(fx.cwd), "startTime": ts(), "lastUpdated": ts(), "kind": "main"})
	line(map[string]any{"$set": map[string]any{"messages": []any{sessionContext}, "lastUpdated": ts()}})
	context := int64(20000)
	tokens := func(out int64) map[string]any {
		return map[string]any{"input": context, "output": out, "cached": 0, "thoughts": 0, "tool": 0, "total": context + out}
	}
	turn := func() {
		line(map[string]any{"id": id(), "timestamp": ts(), "type": "user", "content": []any{map[string]any{"text": "please " + genText[:200]}}})
		touch()
		call := id()
		model := map[string]any{"id": call, "timestamp": ts(), "type": "gemini", "content": "", "thoughts": []any{}, "tokens": tokens(40), "model": "gemini-2.5-flash"}
		line(model)
		touch()
		output := "<untrusted_context>\nOutput: " + genText[:3000] + "\n</untrusted_context>"
		response := map[string]any{"functionResponse": map[string]any{"id": "run_shell_command_" + call, "name": "run_shell_command", "response": map[string]any{"output": output}}}
		model["toolCalls"] = []any{map[string]any{"id": "run_shell_command_" + call, "name": "run_shell_command",
			"args": map[string]any{"command": "cat notes.txt"}, "result": []any{response}, "status": "success", "timestamp": ts()}}
		line(model)
		line(map[string]any{"id": id(), "timestamp": ts(), "type": "user", "content": []any{response}})
		touch()
		context += 1200
		line(map[string]any{"id": id(), "timestamp": ts(), "type": "gemini", "content": genText[:600], "thoughts": []any{}, "tokens": tokens(150), "model": "gemini-2.5-flash"})
		touch()
		context += 300
		if context > 500000 {
			line(map[string]any{"$set": map[string]any{"sessionId": session}})
			line(map[string]any{"$set": map[string]any{"messages": []any{sessionContext,
				map[string]any{"id": id(), "timestamp": ts(), "type": "user", "content": []any{map[string]any{"text": "<state_snapshot>" + genText[:2000] + "</state_snapshot>"}}},
				map[string]any{"id": id(), "timestamp": ts(), "type": "gemini", "content": []any{map[string]any{"text": "Got it. Thanks for the additional context!"}}}}, "lastUpdated": ts()}})
			line(map[string]any{"id": id(), "timestamp": ts(), "type": "info", "content": "Context compressed from 48% to 2%."})
			touch()
			context = 20000
		}
	}
	for written < size {
		turn()
	}
	fx.lastSessionOffset = written
	line(map[string]any{"$set": map[string]any{"sessionId": genUUID(0x6e56)}})
	turn()
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fx.size = written
	return fx
}
