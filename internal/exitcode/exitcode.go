// Package exitcode is lifeloop's one table of process exit codes.
//
// Every command except `run` exits with OK, Failed, Usage or Unreadable.
// `run` passes the harness's own code through (128+N for signal N) and
// uses LaunchFailed, NotExecutable and NotFound for its own failures
// before the harness runs.
package exitcode

const (
	OK         = 0 // success
	Failed     = 1 // the contract said no, validation failed, the operation failed
	Usage      = 2 // bad flags or arguments
	Unreadable = 3 // input unreadable or not JSON

	LaunchFailed  = 125 // run: lifeloop refused or failed before launch
	NotExecutable = 126 // run: the command is not executable
	NotFound      = 127 // run: the command was not found
)
