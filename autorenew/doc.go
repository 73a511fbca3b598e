// Package autorenew is lifeloop's renewal policy: the rule that renews a
// session's harness before its context runs out, at a safe moment
// between turns, with a handoff note. It is a client of the contract,
// not part of lifeloop's core: Policy reads a session's receipt stream
// (as any client reads it) and decides; `lifeloop autorenew` (and `run
// --renew-at`, which starts it) asks the session's wrapper for the
// renewal through the control socket's renew, the operation a person's
// `lifeloop renew` uses.
//
// Policy is a pure state machine: receipts and answers in, decisions
// out, the clock passed in. The Lease bounds renewals at once on the
// machine; State is what the client shows `status` and `top`.
package autorenew
