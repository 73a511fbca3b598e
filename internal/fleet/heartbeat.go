package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
)

// HeartbeatSchema names the heartbeat message's shape.
const HeartbeatSchema = "lifeloop.fleet-heartbeat.v1"

// HeartbeatType is the AMQP type of a heartbeat message: it travels on
// the machine's events exchange with its events but is not an HCP
// event, and consumers take it aside (amqpsink.SideType).
const HeartbeatType = amqpsink.SideType

// DefaultHeartbeatEvery is how often a machine says it is alive: well
// inside the fleet view's default --stale of 10 minutes.
const DefaultHeartbeatEvery = 30 * time.Second

// Heartbeat is a machine's "still here": the fleet view keeps the
// machine fresh (its open sessions are not stale) without an event of
// any session. It creates no session row.
type Heartbeat struct {
	Schema  string    `json:"schema"`
	Machine string    `json:"machine"`
	At      time.Time `json:"at"`
	// EverySeconds is the sender's interval: a view may take a machine
	// silent for several of them as gone.
	EverySeconds float64 `json:"every_seconds"`
}

// DecodeHeartbeat reads a heartbeat message's body.
func DecodeHeartbeat(body []byte) (Heartbeat, error) {
	var h Heartbeat
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("not a fleet heartbeat: %w", err)
	}
	switch {
	case h.Schema != HeartbeatSchema:
		return h, fmt.Errorf("not a fleet heartbeat: schema %q, want %q", h.Schema, HeartbeatSchema)
	case h.Machine == "":
		return h, errors.New("not a fleet heartbeat: no machine")
	case h.At.IsZero():
		return h, errors.New("not a fleet heartbeat: no time")
	}
	return h, nil
}

// HeartbeatRoutingKey is the routing key of machine's heartbeat: the
// target's key for the pseudo session "heartbeat.<machine>", so the
// heartbeat goes wherever the machine's events go (a topic binding of
// "#", or a key without {session_id}).
func HeartbeatRoutingKey(t amqpsink.Target, machine string) string {
	return t.RoutingKeyFor("heartbeat." + machine)
}

// HeartbeatConfig says where and how often a machine's heartbeat goes.
type HeartbeatConfig struct {
	// Target is the machine's events target (`run --events amqp://…`).
	Target  amqpsink.Target
	Machine string
	// Every is the interval (default DefaultHeartbeatEvery).
	Every time.Duration
	// Timeout bounds one connection and publish (default 5 s).
	Timeout time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
}

// StartHeartbeats publishes the machine's heartbeat at once and then
// every cfg.Every, from a goroutine of its own, until ctx ends; it
// returns at once, and the channel is closed when the goroutine has
// ended. A beat the broker does not take within the timeout (a broker
// down or slow) is skipped, logged once per outage, and the next one
// dials again: nothing waits on it. The messages are transient, not
// mandatory, and expire after three intervals in a queue, so a view
// that was away finds the recent ones only.
func StartHeartbeats(ctx context.Context, cfg HeartbeatConfig) <-chan struct{} {
	if cfg.Every <= 0 {
		cfg.Every = DefaultHeartbeatEvery
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	done := make(chan struct{})
	go func() { // ends with ctx
		defer close(done)
		b := &beater{cfg: cfg}
		defer b.drop()
		tick := time.NewTicker(cfg.Every)
		defer tick.Stop()
		for {
			b.beat(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return done
}

// beater holds the heartbeat's connection between beats.
type beater struct {
	cfg  HeartbeatConfig
	conn *amqpsink.Conn
	ch   *amqp.Channel
	down bool // an outage was logged
}

func (b *beater) beat(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	err := b.publish(ctx)
	switch {
	case err != nil && !b.down:
		b.down = true
		b.cfg.Logger.Warn("fleet heartbeat: broker unavailable; skipping beats until it answers", "target", b.cfg.Target.Redacted(), "err", err)
	case err == nil && b.down:
		b.down = false
		b.cfg.Logger.Info("fleet heartbeat: broker back", "target", b.cfg.Target.Redacted())
	}
	if err != nil {
		b.drop()
	}
}

func (b *beater) publish(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	if b.ch == nil || b.ch.IsClosed() {
		b.drop()
		if err := b.connect(ctx); err != nil {
			return err
		}
	}
	body, err := json.Marshal(Heartbeat{Schema: HeartbeatSchema, Machine: b.cfg.Machine, At: b.cfg.Now().UTC(), EverySeconds: b.cfg.Every.Seconds()})
	if err != nil {
		return err
	}
	t := b.cfg.Target
	return b.ch.PublishWithContext(ctx, t.Exchange, HeartbeatRoutingKey(t, b.cfg.Machine), false, false, amqp.Publishing{
		ContentType:  "application/json",
		DeliveryMode: amqp.Transient,
		Type:         HeartbeatType,
		AppId:        "lifeloop",
		Timestamp:    b.cfg.Now(),
		Expiration:   strconv.FormatInt((3 * b.cfg.Every).Milliseconds(), 10),
		Body:         body,
	})
}

// connect dials (bounded by ctx) and declares the target's exchange as
// its publishers do, so a beat never goes to an exchange that is not
// there (which would close the channel).
func (b *beater) connect(ctx context.Context) error {
	t := b.cfg.Target
	type dialed struct {
		conn *amqpsink.Conn
		err  error
	}
	res := make(chan dialed, 1)
	go func() { // ends when the dial does (bounded by its own timeout)
		c, err := amqpsink.Dial(t, "lifeloop heartbeat", 10*time.Second, b.cfg.Timeout)
		res <- dialed{c, err}
	}()
	var d dialed
	select {
	case d = <-res:
	case <-ctx.Done():
		go func() { // close a connection that comes too late
			if late := <-res; late.conn != nil {
				_ = late.conn.Close()
			}
		}()
		return ctx.Err()
	}
	if d.err != nil {
		return fmt.Errorf("connect to %s: %w", t.Redacted(), d.err)
	}
	var ch *amqp.Channel
	err := d.conn.Within(amqpsink.CallTimeout, func() (err error) {
		if ch, err = d.conn.Channel(); err == nil && t.Exchange != "" {
			err = ch.ExchangeDeclare(t.Exchange, t.ExchangeType, true, false, false, false, nil)
		}
		return err
	})
	if err != nil {
		_ = d.conn.Close()
		return fmt.Errorf("%s: %w", t.Redacted(), err)
	}
	b.conn, b.ch = d.conn, ch
	return nil
}

func (b *beater) drop() {
	if b.conn != nil {
		_ = b.conn.Close()
	}
	b.conn, b.ch = nil, nil
}
