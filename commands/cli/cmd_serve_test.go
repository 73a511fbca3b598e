package cli

import (
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
)

// TestSessionListenerStarts: a run with a broker destination listens
// for its machine's commands unless $LIFELOOP_FLEET_LISTEN turns it off;
// a run without one does not; the fleet secret never reaches the
// harness's environment.
func TestSessionListenerStarts(t *testing.T) {
	target, err := amqpsink.ParseURL("amqp://u:p@127.0.0.1:1/?exchange=x")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		listen  string
		targets []amqpsink.Target
		want    bool
	}{
		{"", []amqpsink.Target{target}, true},
		{"on", []amqpsink.Target{target}, true},
		{"off", []amqpsink.Target{target}, false},
		{"0", []amqpsink.Target{target}, false},
		{"NO", []amqpsink.Target{target}, false},
		{"", nil, false},
	} {
		e := &env{Streams: Streams{Getenv: getenvIn([]string{envFleetListen + "=" + c.listen})}}
		if got := newSessionListener(e, c.targets, t.TempDir()) != nil; got != c.want {
			t.Errorf("%s=%q with %d targets: listens %v, want %v", envFleetListen, c.listen, len(c.targets), got, c.want)
		}
	}
	var none *sessionListener
	none.finish() // nothing started: nothing to stop
	if none.hook() != nil {
		t.Error("no listener, yet a session hook")
	}
	got := withoutFleetSecret([]string{"A=1", envFleetSecret + "=s", "B=2"})
	if !slices.Equal(got, []string{"A=1", "B=2"}) {
		t.Errorf("the harness's environment: %q", got)
	}
}
