package attention

import "time"

// Episode is one span of waiting: Kind held from Start to End (zero while
// it lasts). Turn is the number of turns started before it began (0 before
// the first), so waiting can be summed per turn.
type Episode struct {
	ID     int
	Kind   State
	Source Source
	Detail string
	Turn   int
	Start  time.Time
	End    time.Time
}

// Open reports whether the episode still lasts.
func (e Episode) Open() bool { return e.End.IsZero() }

// Duration is the episode's length, up to now while it lasts.
func (e Episode) Duration(now time.Time) time.Duration {
	end := e.End
	if end.IsZero() {
		end = now
	}
	if end.Before(e.Start) {
		return 0
	}
	return end.Sub(e.Start)
}

// Waited sums the durations of the episodes of the given kinds (all
// waiting kinds when none is given), up to now for an open one: the total
// and the total per turn.
func Waited(eps []Episode, now time.Time, kinds ...State) (total time.Duration, perTurn map[int]time.Duration) {
	perTurn = map[int]time.Duration{}
	for _, e := range eps {
		if !ofKind(e.Kind, kinds) {
			continue
		}
		d := e.Duration(now)
		total += d
		perTurn[e.Turn] += d
	}
	return total, perTurn
}

func ofKind(k State, kinds []State) bool {
	if len(kinds) == 0 {
		return k.Waiting()
	}
	for _, w := range kinds {
		if k == w {
			return true
		}
	}
	return false
}
