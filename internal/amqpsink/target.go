// Package amqpsink carries a session's HCP L2 events (internal/hcp)
// over AMQP 0-9-1 with RabbitMQ's official client: a Publisher that
// sends persistent, mandatory messages and waits for the broker's
// publisher confirm (driven from the ledger by internal/outbox, so the
// ledger is the outbox), and a Consumer that is seed 001's caller side
// (manual acks, per-session last_processed_sequence persisted before
// the ack, duplicates skipped, gaps reported, malformed messages
// dead-lettered).
package amqpsink

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Target is a parsed destination:
//
//	amqp://USER:PASS@HOST:PORT/VHOST?exchange=X&routing_key=K&queue=Q
//
// (amqps:// for TLS). Query parameters:
//
//	exchange       exchange to publish to (default: the default exchange);
//	               declared durable, of type exchange_type
//	exchange_type  topic (default), direct, fanout or headers
//	routing_key    routing key; {session_id} is replaced by the session id
//	               (default lifeloop.hcp.{session_id}; with neither exchange
//	               nor routing_key, the queue's name)
//	queue          a durable queue to declare and bind to the exchange, so
//	               that events wait for their consumer even before it first
//	               runs (the consumer's --queue names its own)
//	binding_key    the binding of queue to exchange (default "#", every event
//	               of a topic exchange)
//
// The user and password are the broker's credentials: they are never
// logged, printed or written to a state file (Redacted drops them).
type Target struct {
	// DialURL is the URL without its query: what the client dials.
	DialURL      string
	Exchange     string
	ExchangeType string
	RoutingKey   string
	Queue        string
	BindingKey   string
	redacted     string
}

// IsURL reports whether dest is an AMQP destination.
func IsURL(dest string) bool {
	return strings.HasPrefix(dest, "amqp://") || strings.HasPrefix(dest, "amqps://")
}

// ParseURL parses an AMQP destination. Its errors never repeat the
// credentials.
func ParseURL(s string) (Target, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "amqp" && u.Scheme != "amqps") || u.Host == "" {
		return Target{}, errors.New("want amqp://USER:PASS@HOST:PORT/VHOST?exchange=X&routing_key=K (see `lifeloop publish --help`)")
	}
	q := u.Query()
	t := Target{
		Exchange:     q.Get("exchange"),
		ExchangeType: q.Get("exchange_type"),
		RoutingKey:   q.Get("routing_key"),
		Queue:        q.Get("queue"),
		BindingKey:   q.Get("binding_key"),
	}
	for k := range q {
		switch k {
		case "exchange", "exchange_type", "routing_key", "queue", "binding_key":
		default:
			return Target{}, fmt.Errorf("unknown query parameter %q; known: exchange, exchange_type, routing_key, queue, binding_key", k)
		}
	}
	if t.ExchangeType == "" {
		t.ExchangeType = "topic"
	}
	switch t.ExchangeType {
	case "topic", "direct", "fanout", "headers":
	default:
		return Target{}, fmt.Errorf("exchange_type %q: use topic, direct, fanout or headers", t.ExchangeType)
	}
	if t.RoutingKey == "" {
		if t.Exchange == "" && t.Queue != "" {
			t.RoutingKey = t.Queue
		} else {
			t.RoutingKey = "lifeloop.hcp.{session_id}"
		}
	}
	if t.BindingKey == "" {
		t.BindingKey = "#"
	}
	d := *u
	d.RawQuery, d.Fragment = "", ""
	t.DialURL = d.String()
	r := *u
	r.User, r.Fragment = nil, ""
	t.redacted = r.String()
	return t, nil
}

// Redacted is the destination without credentials: the form logs, errors
// and state files show.
func (t Target) Redacted() string { return t.redacted }

// RoutingKeyFor is the routing key of a session's events.
func (t Target) RoutingKeyFor(sessionID string) string {
	return strings.ReplaceAll(t.RoutingKey, "{session_id}", sessionID)
}
