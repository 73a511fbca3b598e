package amqpsink

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	tg, err := ParseURL("amqp://fleet:s3cret@broker.example:5672/prod?exchange=lifeloop&routing_key=hcp.{session_id}&queue=q1")
	if err != nil {
		t.Fatal(err)
	}
	if tg.DialURL != "amqp://fleet:s3cret@broker.example:5672/prod" || tg.Exchange != "lifeloop" || tg.ExchangeType != "topic" ||
		tg.Queue != "q1" || tg.BindingKey != "#" || tg.RoutingKeyFor("ses_A") != "hcp.ses_A" {
		t.Fatalf("%+v", tg)
	}
	if r := tg.Redacted(); strings.Contains(r, "s3cret") || strings.Contains(r, "fleet@") || !strings.HasPrefix(r, "amqp://broker.example:5672/prod?") {
		t.Fatalf("redacted %q", r)
	}
	// Defaults: the session's routing key; on the default exchange with a
	// queue, the queue's name.
	if tg, _ := ParseURL("amqp://h/?exchange=x"); tg.RoutingKeyFor("ses_B") != "lifeloop.hcp.ses_B" {
		t.Fatalf("default routing key %q", tg.RoutingKey)
	}
	if tg, _ := ParseURL("amqp://h/?queue=q"); tg.RoutingKeyFor("ses_B") != "q" {
		t.Fatalf("default-exchange routing key %q", tg.RoutingKey)
	}
	for _, bad := range []string{
		"http://h/", "amqp:///nohost", "amqp://u:pw@h/?exchange_type=weird", "amqp://u:pw@h/?exchnage=x",
	} {
		_, err := ParseURL(bad)
		if err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		} else if strings.Contains(err.Error(), "pw") {
			t.Errorf("ParseURL(%q) error repeats the password: %v", bad, err)
		}
	}
	if !IsURL("amqps://h/") || IsURL("events.ndjson") || IsURL("fd:3") {
		t.Fatal("IsURL")
	}
}
