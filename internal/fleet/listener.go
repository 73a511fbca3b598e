package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/lifeloop/lifeloop/atomicfile"
	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ListenerConfig says which machine's commands a Listener takes and
// what it does with them.
type ListenerConfig struct {
	Target  amqpsink.Target
	Machine string
	// Secret authorizes commands: a command signed with it may act on
	// every session of this machine; none configured refuses them all.
	Secret []byte
	// Dir keeps the answer of every command taken (idempotency) and the
	// log of every command handled, refused ones included (0700).
	Dir string
	// Do performs an authorized command on its session and returns the
	// state the session's wrapper answered with.
	Do     func(ctx context.Context, c Command) (string, error)
	Logger *slog.Logger
	Now    func() time.Time
	// Heartbeats, when it names an exchange, is the machine's events
	// target: the process that holds the listener lock publishes the
	// machine's heartbeat there (StartHeartbeats) while it listens.
	Heartbeats amqpsink.Target
}

// dialTimeout bounds a connection's TCP connect and AMQP handshake.
const dialTimeout = 10 * time.Second

// CommandsLog is the file, in the listener's folder, with one line per
// command handled (its answer): refused ones are recorded there.
const CommandsLog = "commands.jsonl"

// Listen takes commands from the machine's durable queue until ctx
// ends, one at a time, each answered (to its reply-to) and acknowledged
// after its answer is kept. A broker away is waited for, with backoff.
func Listen(ctx context.Context, cfg ListenerConfig) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := os.MkdirAll(filepath.Join(cfg.Dir, "answers"), statedir.DirPerm); err != nil {
		return fmt.Errorf("fleet listener folder: %w", err)
	}
	backoff := 200 * time.Millisecond
	down := false // one log line when an outage starts, one when it ends
	for ctx.Err() == nil {
		err := listenOnce(ctx, cfg, func() {
			backoff = 200 * time.Millisecond
			if down {
				cfg.Logger.Info("fleet listener: broker back", "target", cfg.Target.Redacted())
				down = false
			}
		})
		if ctx.Err() != nil {
			return nil
		}
		if !down {
			cfg.Logger.Warn("fleet listener: broker unavailable; retrying with backoff", "target", cfg.Target.Redacted(), "err", err)
			down = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
	return nil
}

// listenOnce takes commands over one connection until it fails or ctx
// ends; connected is called once the queue is consumed.
func listenOnce(ctx context.Context, cfg ListenerConfig, connected func()) error {
	conn, err := amqpsink.Dial(cfg.Target, "lifeloop serve", 10*time.Second, dialTimeout)
	if err != nil {
		return err
	}
	defer func() { _ = conn.Close() }()
	q := CommandQueue(cfg.Machine)
	var ch *amqp.Channel
	var deliveries <-chan amqp.Delivery
	err = conn.Within(amqpsink.CallTimeout, func() error {
		var err error
		if ch, err = conn.Channel(); err != nil {
			return err
		}
		if _, err := ch.QueueDeclare(q, true, false, false, false, nil); err != nil {
			return err
		}
		if err := ch.Qos(1, 0, false); err != nil {
			return err
		}
		deliveries, err = ch.ConsumeWithContext(ctx, q, "", false, false, false, false, nil)
		return err
	})
	if err != nil {
		return err
	}
	cfg.Logger.Info("fleet listener: taking commands", "machine", cfg.Machine, "queue", q)
	connected()
	for {
		select {
		case <-ctx.Done():
			return nil
		case d, ok := <-deliveries:
			if !ok {
				return errors.New("the broker closed the channel")
			}
			res, ok := handle(ctx, cfg, d.Body)
			if !ok {
				// Stopped while the command was done: nothing kept,
				// nothing acknowledged; the broker gives it to the
				// next listener, which finds its kept answer if the
				// wrapper took it.
				return nil
			}
			// The answer goes out even when ctx ended meanwhile (a
			// session's listener stops as its own session, just
			// aborted, ends); not sent, the command is not acknowledged,
			// and its next delivery gets the kept answer.
			if d.ReplyTo != "" {
				b, _ := json.Marshal(res)
				pctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := ch.PublishWithContext(pctx, "", d.ReplyTo, false, false, amqp.Publishing{ContentType: "application/json", CorrelationId: d.CorrelationId, Body: b})
				cancel()
				if err != nil {
					return err
				}
			}
			if err := d.Ack(false); err != nil {
				return err
			}
		}
	}
}

// handle answers one command: refused when it is not authorized or not
// this machine's, its kept answer when its id was handled before, else
// what Do made of it (kept before the acknowledgement). ok is false
// when ctx ended while Do ran: its failure is the listener's stop, not
// an answer, and is neither kept nor sent.
func handle(ctx context.Context, cfg ListenerConfig, body []byte) (res Result, ok bool) {
	c, err := OpenCommand(body, cfg.Secret)
	res = Result{CommandID: c.ID, Machine: cfg.Machine, Session: c.Session, Op: c.Op, At: cfg.Now().UTC()}
	switch {
	case err != nil:
		res.Status, res.Message = ResultRefused, err.Error()
	case c.Machine != cfg.Machine:
		res.Status, res.Message = ResultRefused, fmt.Sprintf("command for machine %q taken by %q", c.Machine, cfg.Machine)
	default:
		answer := filepath.Join(cfg.Dir, "answers", c.ID+".json")
		if b, err := os.ReadFile(answer); err == nil && json.Unmarshal(b, &res) == nil {
			res.Repeat = true
			break
		}
		state, err := cfg.Do(ctx, c)
		if err != nil && ctx.Err() != nil {
			return res, false
		}
		if err != nil {
			res.Status, res.Message = ResultFailed, err.Error()
		} else {
			res.Status, res.State = ResultDone, state
		}
		if b, err := json.Marshal(res); err == nil {
			_ = atomicfile.Write(answer, b)
		}
	}
	if cfg.Logger != nil {
		cfg.Logger.Info("fleet command", "command_id", res.CommandID, "session", res.Session, "op", res.Op, "status", res.Status, "repeat", res.Repeat, "message", res.Message)
	}
	if f, err := os.OpenFile(filepath.Join(cfg.Dir, CommandsLog), os.O_CREATE|os.O_APPEND|os.O_WRONLY, statedir.FilePerm); err == nil {
		b, _ := json.Marshal(res)
		_, _ = f.Write(append(b, '\n'))
		_ = f.Close()
	}
	return res, true
}

// Send publishes c, signed with secret, to its machine's queue and waits
// up to wait for the answer. The command expires unexecuted if no
// listener takes it within wait; a machine whose listener never ran has
// no queue, and the broker returns the command at once.
func Send(ctx context.Context, t amqpsink.Target, c Command, secret []byte, wait time.Duration) (Result, error) {
	body, err := Seal(c, secret)
	if err != nil {
		return Result{}, err
	}
	conn, err := amqpsink.Dial(t, "lifeloop command", 0, dialTimeout)
	if err != nil {
		return Result{}, fmt.Errorf("connect to %s: %v", t.Redacted(), err)
	}
	defer func() { _ = conn.Close() }()
	const replyTo = "amq.rabbitmq.reply-to"
	var ch *amqp.Channel
	var answers <-chan amqp.Delivery
	err = conn.Within(amqpsink.CallTimeout, func() error {
		var err error
		if ch, err = conn.Channel(); err != nil {
			return err
		}
		answers, err = ch.Consume(replyTo, "", true, false, false, false, nil)
		return err
	})
	if err != nil {
		return Result{}, err
	}
	returned := ch.NotifyReturn(make(chan amqp.Return, 1))
	err = ch.PublishWithContext(ctx, "", CommandQueue(c.Machine), true, false, amqp.Publishing{
		ContentType: "application/json", DeliveryMode: amqp.Persistent, CorrelationId: c.ID, ReplyTo: replyTo,
		Expiration: strconv.FormatInt(wait.Milliseconds(), 10), Timestamp: c.IssuedAt, Body: body,
	})
	if err != nil {
		return Result{}, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	closed := conn.NotifyClose(make(chan *amqp.Error, 1))
	for {
		select {
		case <-returned:
			return Result{}, fmt.Errorf("machine %q has no command queue on %s: its listener never ran (run a session there with --events %s, or `lifeloop serve`)", c.Machine, t.Redacted(), t.Redacted())
		case <-closed:
			return Result{}, &LostError{ID: c.ID}
		case m, ok := <-answers:
			if !ok {
				return Result{}, &LostError{ID: c.ID}
			}
			var r Result
			if err := json.Unmarshal(m.Body, &r); err != nil || r.CommandID != c.ID {
				continue
			}
			return r, nil
		case <-timer.C:
			return Result{}, fmt.Errorf("machine %q did not answer within %s: its listener is not running; the command expired unexecuted", c.Machine, wait)
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
}

// LostError: the broker connection was lost after the command was sent
// and before its answer came. The command may have been done, and only
// once: sent again with the same id, it is done if it was not, and
// answered with the kept answer (Repeat) if it was.
type LostError struct{ ID string }

func (e *LostError) Error() string {
	return fmt.Sprintf("the broker connection was lost before the answer to command %s; it is done at most once: send it again with the same id for its answer", e.ID)
}
