package amqpsink

import (
	"io"
	"strings"
	"testing"
)

// TestOpenConsumerTwice: a second consumer on the same queue and state
// folder is refused with an error that says why, and the folder is free
// again once the first closes.
func TestOpenConsumerTwice(t *testing.T) {
	cfg := ConsumerConfig{Queue: "q1", StateDir: t.TempDir(), Out: io.Discard}
	first, err := OpenConsumer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := OpenConsumer(cfg); err == nil || !strings.Contains(err.Error(), "another consumer uses") {
		if c != nil {
			_ = c.Close()
		}
		t.Fatalf("second OpenConsumer: %v, want another consumer uses ...", err)
	}
	_ = first.Close()
	again, err := OpenConsumer(cfg)
	if err != nil {
		t.Fatalf("OpenConsumer after Close: %v", err)
	}
	_ = again.Close()
}
