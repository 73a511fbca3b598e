// Package attention tells, from evidence, whether a session's harness is
// working or waits for a person: a permission dialog (needs_permission),
// a question (needs_answer), a finished turn (waiting_for_input) or an
// error that stopped the turn (stopped_on_error).
//
// It is pure: Facts go in (a harness hook or plugin event, a record of the
// harness's own files, a screen text match, a frame opened or ended, a key
// typed at the terminal), each with the time it was observed; a Tracker
// folds them into the current Attention and the Episodes of waiting. No
// clock is read and nothing is written; the caller passes time in.
//
// Trust: hook > transcript (the harness's files) > screen. Within an
// episode a claim from a less trusted source never overrides the source
// that opened it. Turn boundaries (frame opened, frame ended) and a key
// typed while a dialog waits are not claims: they end the episode whatever
// its source (a new turn, a finished turn, the person answered).
//
// The per-harness mappings are the plug-ins' (adapters.AttentionReader):
// they turn signals measured from the pinned binaries into Facts;
// docs/attention.md lists what each harness offers and how it was
// established. This package is groundwork: the product does not use it
// yet.
package attention
