package cli

import "strings"

// listValue is a repeatable flag value that keeps each occurrence whole.
// urfave's StringSliceFlag splits values on commas, which would break
// client arguments such as JSON documents and paths containing commas.
type listValue struct{ items []string }

// Set appends one occurrence.
func (l *listValue) Set(s string) error {
	l.items = append(l.items, s)
	return nil
}

// String lists the occurrences for help output.
func (l *listValue) String() string { return strings.Join(l.items, " ") }
