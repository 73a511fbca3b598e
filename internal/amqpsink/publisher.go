package amqpsink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/outbox"
)

// DefaultConfirmTimeout bounds one publish and its confirm.
const DefaultConfirmTimeout = 10 * time.Second

// dialTimeout bounds the TCP connection and the AMQP handshake.
const dialTimeout = 5 * time.Second

// Publisher publishes one session's events to one Target. Post sends
// one message and returns once the broker confirmed it; any failure
// drops the connection, and the next Post dials again. It is safe for
// concurrent use (publishes are serialised).
type Publisher struct {
	t          Target
	routingKey string
	// Timeout bounds one publish and its confirm (default
	// DefaultConfirmTimeout).
	Timeout time.Duration

	mu      sync.Mutex
	conn    *Conn
	ch      *amqp.Channel
	returns chan amqp.Return
	// returned holds the message ids the broker returned (no queue took
	// them) on the current channel, each with the broker's reply text.
	returned map[string]string
}

// NewPublisher returns the publisher of session sessionID's events.
func NewPublisher(t Target, sessionID string) *Publisher {
	return &Publisher{t: t, routingKey: t.RoutingKeyFor(sessionID)}
}

// dial opens a connection and a channel and declares the target's
// exchange (and queue), each call bounded by CallTimeout.
func dial(t Target) (*Conn, *amqp.Channel, error) {
	conn, err := Dial(t, "lifeloop", 10*time.Second, dialTimeout)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %s", t.Redacted(), cleanErr(err))
	}
	var ch *amqp.Channel
	err = conn.Within(CallTimeout, func() error {
		var err error
		if ch, err = conn.Channel(); err != nil {
			return err
		}
		return declare(ch, t)
	})
	if err != nil {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("%s: %s", t.Redacted(), cleanErr(err))
	}
	return conn, ch, nil
}

// declare declares the target's durable exchange and queue (and binds
// them) when it names them.
func declare(ch *amqp.Channel, t Target) error {
	if t.Exchange != "" {
		if err := ch.ExchangeDeclare(t.Exchange, t.ExchangeType, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare exchange %s: %w", t.Exchange, err)
		}
	}
	if t.Queue != "" {
		if _, err := ch.QueueDeclare(t.Queue, true, false, false, false, nil); err != nil {
			return fmt.Errorf("declare queue %s: %w", t.Queue, err)
		}
		if t.Exchange != "" {
			if err := ch.QueueBind(t.Queue, t.BindingKey, t.Exchange, false, nil); err != nil {
				return fmt.Errorf("bind queue %s: %w", t.Queue, err)
			}
		}
	}
	return nil
}

// cleanErr keeps a client error's text short; the client's errors do
// not carry the URL.
func cleanErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func (p *Publisher) connect() error {
	if p.ch != nil && !p.ch.IsClosed() {
		return nil
	}
	p.drop()
	conn, ch, err := dial(p.t)
	if err != nil {
		return err
	}
	if err := conn.Within(CallTimeout, func() error { return ch.Confirm(false) }); err != nil {
		_ = conn.Close()
		return fmt.Errorf("%s: confirm mode: %s", p.t.Redacted(), cleanErr(err))
	}
	p.conn, p.ch = conn, ch
	p.returns = ch.NotifyReturn(make(chan amqp.Return, 1024))
	p.returned = map[string]string{}
	return nil
}

func (p *Publisher) drop() {
	if p.conn != nil {
		_ = p.conn.Close()
	}
	p.conn, p.ch, p.returns = nil, nil, nil
}

// Post publishes body as a persistent, mandatory message with message id
// id and waits for the broker's confirm. nil means the broker took it
// into a queue; any error is worth a retry (a broker that is down, a
// nack, a message no queue is bound for).
func (p *Publisher) Post(ctx context.Context, body []byte, id string) error {
	wait, err := p.Send(ctx, body, id)
	if err != nil {
		return err
	}
	return wait(ctx)
}

// Send publishes body as Post does but does not wait: wait returns once
// the broker confirmed it (nil) or did not (an error). Messages sent on
// one connection are confirmed in order; after any failure the caller
// sends again, in order, from the first message that failed (the outbox
// does).
func (p *Publisher) Send(ctx context.Context, body []byte, id string) (func(context.Context) error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.connect(); err != nil {
		return nil, err
	}
	dc, err := p.ch.PublishWithDeferredConfirmWithContext(ctx, p.t.Exchange, p.routingKey, true, false, amqp.Publishing{
		ContentType:  "application/json",
		DeliveryMode: amqp.Persistent,
		MessageId:    id,
		Timestamp:    time.Now(),
		Type:         hcp.MessageType,
		AppId:        "lifeloop",
		Body:         body,
	})
	if err != nil {
		p.drop()
		return nil, fmt.Errorf("publish to %s: %s", p.t.Redacted(), cleanErr(err))
	}
	ch := p.ch
	return func(ctx context.Context) error {
		timeout := p.Timeout
		if timeout <= 0 {
			timeout = DefaultConfirmTimeout
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		ok, err := dc.WaitContext(ctx)
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil || !ok {
			if p.ch == ch {
				p.drop()
			}
			if err == nil {
				err = errors.New("the broker did not confirm the message (nack or connection lost)")
			}
			return fmt.Errorf("publish to %s: %s", p.t.Redacted(), cleanErr(err))
		}
		if p.ch != ch {
			return nil // confirmed on a channel since replaced: its returns are gone with it
		}
		for drained := false; !drained; {
			select {
			case r := <-p.returns:
				p.returned[r.MessageId] = strings.ToLower(r.ReplyText)
			default:
				drained = true
			}
		}
		if reply, ok := p.returned[id]; ok {
			delete(p.returned, id)
			return fmt.Errorf("publish to %s: no queue is bound for routing key %q (%s); bind one or add queue= to the URL", p.t.Redacted(), p.routingKey, reply)
		}
		return nil
	}, nil
}

// Close closes the connection.
func (p *Publisher) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop()
	return nil
}

// CursorEvery is how often the cursor file is written while events flow:
// after a crash, `lifeloop publish` sends again at most this much, with
// the same message ids and sequences, which consumers skip.
const CursorEvery = 250 * time.Millisecond

// DefaultMaxBackoff bounds the wait between publish retries: a broker
// that comes back is used within this long.
const DefaultMaxBackoff = 5 * time.Second

// Outbox is the outbox.Config that publishes session sessionID's HCP
// events from its ledger (ledgerPath) to t, with the cursor in
// statePath; machine names where the session runs (session_created's
// metadata.machine; "" for none). Retries go on until the broker takes
// each message: a message is never given up.
func Outbox(ledgerPath, statePath, sessionID, machine string, t Target, p *Publisher) outbox.Config {
	proj := hcp.NewProjector(sessionID)
	proj.SetMachine(machine)
	return outbox.Config{
		LedgerPath: ledgerPath,
		StatePath:  statePath,
		Target:     t.Redacted(),
		Expand: func(e ledger.Entry, _ bool) ([]outbox.Message, error) {
			var msgs []outbox.Message
			for _, ev := range proj.Project(e.Receipt) {
				b, err := json.Marshal(ev)
				if err != nil {
					return nil, err
				}
				msgs = append(msgs, outbox.Message{Body: b, ID: ev.MessageID})
			}
			return msgs, nil
		},
		Send:        p.Send,
		CursorEvery: CursorEvery,
		MaxBackoff:  DefaultMaxBackoff,
		MinBackoff:  200 * time.Millisecond,
	}
}
