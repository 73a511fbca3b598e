package ledger

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperCmd starts this test binary as an appending helper process in its
// own process group, killed (the whole group) when the test ends.
func helperCmd(t *testing.T, path string, count int, tag string, env ...string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		helperEnv+"=append", "LEDGER_PATH="+path,
		"LEDGER_COUNT="+strconv.Itoa(count), "LEDGER_TAG="+tag)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd, out
}

// parseAck parses "<sequence> <receipt id>"; a line cut short by the kill
// does not parse.
func parseAck(line string) (uint64, string, bool) {
	seqS, id, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(id, "lfr_") || len(id) != len("lfr_")+26 {
		return 0, "", false
	}
	seq, err := strconv.ParseUint(seqS, 10, 64)
	return seq, id, err == nil
}

// TestSIGKILLMidAppend kills a writer with SIGKILL at random moments, many
// times over, and checks that every receipt the writer acknowledged is in
// the ledger and that the ledger is never corrupt. Every other writer
// stops mid-line before it is killed, leaving a real torn tail for the
// next writer to repair.
func TestSIGKILLMidAppend(t *testing.T) {
	iterations := 50
	if testing.Short() {
		iterations = 10
	}
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 42))
	acked := make(map[uint64]string)
	for i := 0; i < iterations; i++ {
		var env []string
		if i%2 == 1 {
			env = append(env, "LEDGER_TORN="+strconv.Itoa(1+rng.IntN(5)))
		}
		cmd, out := helperCmd(t, path, 0, fmt.Sprint("w", i), env...)
		wantAcks := rng.IntN(15)
		sc := bufio.NewScanner(out)
		record := func(line string) {
			if seq, id, ok := parseAck(line); ok {
				if prev, dup := acked[seq]; dup && prev != id {
					t.Fatalf("sequence %d acknowledged twice: %s and %s", seq, prev, id)
				}
				acked[seq] = id
			}
		}
		for n := 0; n < wantAcks && sc.Scan(); n++ {
			record(sc.Text())
		}
		// Kill at a random point within the next append or two.
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond)
		if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() { // acknowledgements printed before the kill landed
			record(sc.Text())
		}
		_ = cmd.Wait()

		rep, err := Verify(path)
		if errors.Is(err, fs.ErrNotExist) && len(acked) == 0 {
			continue // killed before the first writer created the ledger
		}
		if err != nil {
			t.Fatal(err)
		}
		// A kill may leave a torn tail (repaired by the next writer), but
		// never a gap, a duplicate or an invalid complete line.
		if len(rep.Gaps) > 0 || rep.Duplicates > 0 || len(rep.InvalidLines) > 0 {
			t.Fatalf("iteration %d: ledger damaged: %+v", i, rep)
		}
	}
	// Open once more (repairing any torn tail) and check every
	// acknowledged receipt is there with the acknowledged id.
	l, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	found := make(map[uint64]string)
	for e, err := range ReadSince(path, 0) {
		if err != nil {
			t.Fatal(err)
		}
		found[e.Sequence] = e.Receipt.ReceiptID
	}
	for seq, id := range acked {
		if found[seq] != id {
			t.Fatalf("acknowledged receipt %d %s missing (found %q)", seq, id, found[seq])
		}
	}
	rep, err := Verify(path)
	if err != nil || !rep.OK {
		t.Fatalf("final Verify = %+v, %v", rep, err)
	}
	if len(acked) == 0 {
		t.Fatal("no receipt was ever acknowledged; the test exercised nothing")
	}
	if rep.RecoveredTornBytes == 0 && !testing.Short() {
		t.Fatal("no kill landed mid-line in 50 iterations; torn-tail repair was not exercised")
	}
	t.Logf("%d iterations, %d acknowledged receipts, %d in ledger, torn bytes recovered %d",
		iterations, len(acked), rep.Count, rep.RecoveredTornBytes)
}

// TestConcurrentProcesses appends from several processes at once: the
// sequences must be unique and gapless, and no two lines interleaved.
func TestConcurrentProcesses(t *testing.T) {
	const procs, each = 4, 50
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	var mu sync.Mutex
	owner := make(map[uint64]int)
	var wg sync.WaitGroup
	cmds := make([]*exec.Cmd, procs)
	for p := 0; p < procs; p++ {
		cmd, out := helperCmd(t, path, each, fmt.Sprint("p", p))
		cmds[p] = cmd
		wg.Add(1)
		go func(p int, out io.Reader) {
			defer wg.Done()
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				seq, _, ok := parseAck(sc.Text())
				if !ok {
					t.Errorf("bad ack %q", sc.Text())
					continue
				}
				mu.Lock()
				if q, dup := owner[seq]; dup {
					t.Errorf("sequence %d acknowledged to processes %d and %d", seq, q, p)
				}
				owner[seq] = p
				mu.Unlock()
			}
		}(p, out)
	}
	wg.Wait()
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", p, err)
		}
	}
	if len(owner) != procs*each {
		t.Fatalf("%d acknowledgements, want %d", len(owner), procs*each)
	}
	rep, err := Verify(path)
	if err != nil || !rep.OK || rep.Count != procs*each || rep.LastSeq != procs*each {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	perWriter := make(map[string]int)
	for e, err := range ReadSince(path, 0) {
		if err != nil {
			t.Fatal(err)
		}
		perWriter[fmt.Sprint(e.Receipt.TelemetrySummary["writer"])]++
	}
	for p := 0; p < procs; p++ {
		if perWriter[fmt.Sprint("p", p)] != each {
			t.Fatalf("writer p%d has %d lines, want %d", p, perWriter[fmt.Sprint("p", p)], each)
		}
	}
}
