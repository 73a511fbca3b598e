package amqpsink_test

import (
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/amqpsink/rabbittest"
)

// TestConnWithinBoundsAHungBroker: a broker that keeps a connection open
// but answers nothing (stopped with SIGSTOP) holds a channel's opening
// and a close only as long as Within's bound, which ends in an error and
// a connection seen closed; once the broker goes on, a new connection
// works.
func TestConnWithinBoundsAHungBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a RabbitMQ broker")
	}
	b := rabbittest.Start(t)
	target, err := amqpsink.ParseURL(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := amqpsink.Dial(target, "test", 0, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	thaw := b.Freeze(t)
	start := time.Now()
	err = conn.Within(time.Second, func() error { _, err := conn.Channel(); return err })
	took := time.Since(start)
	if err == nil || took > 10*time.Second {
		t.Fatalf("a channel opened on a hung broker: %v after %s; want an error after the 1 s bound", err, took)
	}
	if !conn.IsClosed() {
		t.Error("the connection is not seen closed after its call outlived the bound")
	}
	_ = conn.Close() // already closed: returns at once
	thaw()
	var ch *amqp.Channel
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		c, err := amqpsink.Dial(target, "test", 0, 5*time.Second)
		if err == nil {
			err = c.Within(amqpsink.CallTimeout, func() (err error) { ch, err = c.Channel(); return err })
			if err == nil {
				_ = ch.Close()
				if err := c.Close(); err != nil {
					t.Errorf("close after the broker went on: %v", err)
				}
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no connection after the broker went on: %v", err)
		}
	}
	t.Logf("the call on the hung broker failed after %s", took.Round(time.Millisecond))
}
