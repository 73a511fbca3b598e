package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/amqpsink/rabbittest"
	"github.com/lifeloop/lifeloop/internal/control"
	ifleet "github.com/lifeloop/lifeloop/internal/fleet"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// The fleet benchmarks (issue "The fleet"): run one at a time with
// -benchtime=1x (CPU) or Nx (latencies), e.g.
//
//	go test ./e2e/fleet/ -run '^$' -bench 'BenchmarkFleet' -benchtime=1x
//
// Each reports its figures as metrics; the goals are in docs/fleet.md
// and docs/benchmarks.md, never asserted.

// benchLifeloop runs the lifeloop binary in its own process group with
// env, killed when the benchmark ends.
func benchLifeloop(b *testing.B, env []string, stdout io.Writer, args ...string) (*exec.Cmd, *rabbittest.Buffer, chan error) {
	b.Helper()
	cmd := exec.Command(bin, args...) //nolint:noctx // stopped by its process group
	stderr := &rabbittest.Buffer{}
	cmd.Env, cmd.Stdout, cmd.Stderr = env, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	b.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case err := <-done:
			done <- err
		case <-time.After(10 * time.Second):
		}
	})
	return cmd, stderr, done
}

func benchEnv(b *testing.B, extra ...string) []string {
	dir := b.TempDir()
	for _, d := range []string{"home", "state"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			b.Fatal(err)
		}
	}
	return append([]string{"HOME=" + filepath.Join(dir, "home"), "PATH=" + binDir + ":" + os.Getenv("PATH"),
		"LIFELOOP_STATE_DIR=" + filepath.Join(dir, "state"), "LANG=C.UTF-8"}, extra...)
}

// turns keeps every session of sf working: one turn (four progress
// events) every period per session, the sessions spread over the
// period, until ctx ends.
func (sf *simFleet) turns(ctx context.Context, period time.Duration) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i, s := range sf.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
				return
			case <-time.After(period * time.Duration(i) / time.Duration(len(sf.sessions))):
			}
			tick := time.NewTicker(period)
			defer tick.Stop()
			for n := 0; ; n++ {
				if s.frame(ctx, n) != nil {
					return
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		}()
	}
	return &wg
}

// BenchmarkFleetTopCPU: the CPU of `lifeloop top --fleet --json` (one
// process reading and folding the fleet's queue) while 200 live
// sessions on 20 machines each publish a turn (four progress events)
// every period, the sessions spread over it, over a 20 s read (--wait;
// the queue never goes quiet that long). CPU is the process's
// user+system time over its wall time, its start and the replay of
// what it kept included; beside it, the first read (the backlog of the
// 200 sessions' starts, then quiet) as the cost of a start.
// Sub-benchmarks: a turn every 30 s per session (0.13 events/s a
// session: working sessions at today's tick) and every 5 s (0.8/s).
func BenchmarkFleetTopCPU(b *testing.B) {
	for _, period := range []time.Duration{30 * time.Second, 5 * time.Second} {
		b.Run("turn-every-"+period.String(), func(b *testing.B) { benchTopCPU(b, period) })
	}
}

func benchTopCPU(b *testing.B, period time.Duration) {
	const window = 20 * time.Second
	sf := newSimFleet(b, "bench.cpu."+period.String(), 20, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := sf.each(func(s *simSession) error { return s.start(ctx) }); err != nil {
		b.Fatal(err)
	}
	env := benchEnv(b)
	var steady float64 // the busy read's %core from its 5th second to 1 s before its end
	top := func(wait time.Duration) (cpu, wall time.Duration, rows int) {
		var out bytes.Buffer
		start := time.Now()
		cmd, stderr, done := benchLifeloop(b, env, &out, "top", "--fleet", broker.URL+"?exchange="+sf.exchange, "--queue", sf.queue, "--json", "--wait", wait.String())
		if wait == window {
			steady = steadyCPU(cmd.Process.Pid, 5*time.Second, window-time.Second)
		}
		if err := <-done; err != nil {
			b.Fatalf("top --fleet: %v\n%s", err, stderr.String())
		}
		wall = time.Since(start)
		var rs []json.RawMessage
		if err := json.Unmarshal(out.Bytes(), &rs); err != nil {
			b.Fatalf("top --fleet --json: %v", err)
		}
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), wall, len(rs)
	}
	startCPU, startWall, rows := top(10 * time.Second)
	if rows != 200 {
		b.Fatalf("top --fleet shows %d rows, want 200", rows)
	}
	b.ResetTimer()
	for range b.N {
		wctx, stop := context.WithCancel(ctx)
		wg := sf.turns(wctx, period)
		time.Sleep(time.Second) // the publishers at their pace
		var before uint64
		for _, s := range sf.sessions {
			before += s.sequence()
		}
		busyCPU, busyWall, _ := top(window)
		var after uint64
		for _, s := range sf.sessions {
			after += s.sequence()
		}
		stop()
		wg.Wait()
		busy := 100 * busyCPU.Seconds() / busyWall.Seconds()
		b.ReportMetric(busy, "%core")
		if steady >= 0 {
			b.ReportMetric(steady, "%core-steady")
		}
		b.ReportMetric(float64(after-before)/busyWall.Seconds(), "events/s")
		b.ReportMetric(float64(busyCPU.Microseconds())/float64(max(after-before, 1)), "µs-CPU/event")
		b.Logf("top --fleet over %s, 200 live sessions, a turn every %s each (%d events, %.1f/s): %s CPU = %.2f %% of a core (%.2f %% once started: from its 5th second on); its first read (start, 200 sessions' backlog) %s CPU in %s",
			busyWall.Round(time.Millisecond), period, after-before, float64(after-before)/busyWall.Seconds(), busyCPU.Round(time.Millisecond), busy, steady, startCPU.Round(time.Millisecond), startWall.Round(time.Millisecond))
	}
}

// steadyCPU is the %core process pid uses between from and to after
// now (its /proc/<pid>/stat times, in clock ticks of 1/100 s): the
// view's running cost without its start and replay; -1 where /proc
// cannot tell (not Linux, or the process ended early).
func steadyCPU(pid int, from, to time.Duration) float64 {
	start := time.Now()
	time.Sleep(from)
	t0, ok0 := procTicks(pid)
	w0 := time.Now()
	time.Sleep(to - time.Since(start))
	t1, ok1 := procTicks(pid)
	if !ok0 || !ok1 {
		return -1
	}
	return 100 * float64(t1-t0) / 100 / time.Since(w0).Seconds()
}

// procTicks is utime+stime of pid in clock ticks.
func procTicks(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state): utime is field 14, stime 15
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	s, err2 := strconv.ParseUint(f[12], 10, 64)
	return u + s, err1 == nil && err2 == nil
}

func (s *simSession) sequence() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq
}

// BenchmarkFleetStateToRow: the time from a session's state change (its
// event handed to the publisher, which waits for the broker's confirm)
// to the new state in the fleet view's rows (the fold `top --fleet`
// shows, read as each batch lands), among 200 live sessions on 20
// machines each publishing a turn every 30 s, on loopback. Reports the
// median and p90.
func BenchmarkFleetStateToRow(b *testing.B) {
	sf := newSimFleet(b, "bench.latency", 20, 10)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := sf.each(func(s *simSession) error { return s.start(ctx) }); err != nil {
		b.Fatal(err)
	}
	view := sf.view(b)
	want := map[string]string{}
	for _, s := range sf.sessions {
		want[s.id] = hcp.StateRunning
	}
	if took, diff := converge(view, want, 60*time.Second); len(diff) > 0 {
		b.Fatalf("the view did not converge in %s: %v", took, diff[:min(len(diff), 5)])
	}
	// The other sessions work meanwhile: a turn every 30 s each.
	tctx, stopTurns := context.WithCancel(ctx)
	defer stopTurns()
	sf.turns(tctx, 30*time.Second)
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		s := sf.sessions[(i*7)%len(sf.sessions)]
		from, to, reason := hcp.StateRunning, hcp.StatePaused, "renewal"
		if want[s.id] == hcp.StatePaused {
			from, to, reason = hcp.StatePaused, hcp.StateRunning, "renewed"
		}
		start := time.Now()
		go func() { _ = s.transition(ctx, from, to, reason) }()
		for seen := false; !seen; {
			select {
			case <-view.Batches():
			case <-time.After(time.Millisecond):
			}
			for _, r := range view.Rows(time.Now(), 0) {
				if r.Session == s.id && r.State == to {
					seen = true
				}
			}
			if time.Since(start) > time.Minute {
				b.Fatalf("%s never showed %s", s.id, to)
			}
		}
		lat = append(lat, time.Since(start))
		want[s.id] = to
	}
	b.StopTimer()
	reportLatency(b, "state change → row", lat)
}

func reportLatency(b *testing.B, what string, lat []time.Duration) {
	b.Helper()
	slices.Sort(lat)
	p50, p90 := lat[len(lat)/2], lat[len(lat)*9/10]
	b.ReportMetric(float64(p50.Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(p90.Microseconds())/1000, "ms-p90")
	b.Logf("%s over %d samples: median %s, p90 %s, max %s", what, len(lat), p50.Round(100*time.Microsecond), p90.Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond))
}

// BenchmarkFleetCommandRoundTrip: the time from a caller's abort
// (ifleet.Send: sealed, published to the machine's queue) to its answer
// from the machine's `lifeloop serve`, which answers once the session's
// wrapper has taken the abort (state ABORTING, the harness being
// stopped), for a real wrapped session (`lifeloop run` of a generic
// command) on loopback. Each iteration starts its own session (not
// timed). Reports the median and p90.
func BenchmarkFleetCommandRoundTrip(b *testing.B) {
	env := benchEnv(b, "LIFELOOP_MACHINE=bench", "LIFELOOP_FLEET_SECRET=s")
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LIFELOOP_STATE_DIR="); ok {
			state = v
		}
	}
	_, serveErr, _ := benchLifeloop(b, env, io.Discard, "serve", broker.URL)
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(serveErr.String(), "taking commands"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("serve did not take commands: %s", serveErr.String())
		}
	}
	target, err := amqpsink.ParseURL(broker.URL)
	if err != nil {
		b.Fatal(err)
	}
	url := broker.URL + "?exchange=ex.bench.commands&queue=q.bench.commands"
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		_, runErr, done := benchLifeloop(b, env, io.Discard, "run", "--tick", "0", "--events", url, "--", "sh", "-c", "echo ready; sleep 300")
		id := ""
		for deadline := time.Now().Add(60 * time.Second); id == ""; time.Sleep(20 * time.Millisecond) {
			recs, _ := statedir.ListSessions(state)
			for _, r := range recs {
				if r.State == statedir.StateRunning {
					if _, err := os.Stat(control.SocketFor(state, r.ID)); err == nil {
						id = r.ID
					}
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("no running session: %s", runErr.String())
			}
		}
		c := ifleet.Command{ID: fmt.Sprintf("cmd_bench_%d", i), Machine: "bench", Session: id, Op: "abort", Caller: "bench", IssuedAt: time.Now().UTC()}
		b.StartTimer()
		start := time.Now()
		res, err := ifleet.Send(context.Background(), target, c, []byte("s"), 60*time.Second)
		took := time.Since(start)
		b.StopTimer()
		if err != nil || res.Status != ifleet.ResultDone {
			b.Fatalf("abort %s: %+v %v", id, res, err)
		}
		lat = append(lat, took)
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			b.Fatalf("session %s did not end after its abort", id)
		}
		b.StartTimer()
	}
	b.StopTimer()
	reportLatency(b, "abort publish → answer (wrapper ABORTING)", lat)
}
