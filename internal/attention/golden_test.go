package attention

// The episodes each recording yields (ms from its first line). In the
// permission recording the person's answers are the keys the recorder
// typed (Enter allowed the first call, Escape denied the second); Claude
// fires no hook when a dialog is answered with a denial, nor a Stop for
// the turn that denial interrupts.
var (
	goldenClaudePermission = []wantEpisode{
		{NeedsPermission, "Bash", 1, 1470, 7739},
		{WaitingForInput, "", 1, 9220, 14060},
		{NeedsPermission, "Bash", 2, 14508, 16579},
	}
	goldenCodexSandboxDenied = []wantEpisode{
		{WaitingForInput, "", 1, 647, 5498},
		{WaitingForInput, "", 2, 6232, 13860},
	}
	goldenGeminiPermission = []wantEpisode{
		{NeedsPermission, "Confirm Shell Command: touch", 1, 2000, 4221},
		{WaitingForInput, "", 1, 5048, 9416},
		{NeedsPermission, "Confirm Shell Command: touch", 2, 9921, 13255},
	}
	goldenOpenCodePermission = []wantEpisode{
		{NeedsPermission, "bash", 0, 8626, 10671},
		{WaitingForInput, "", 0, 11770, 14321},
		{NeedsPermission, "bash", 0, 14855, 16965},
		{WaitingForInput, "", 0, 17117, -1},
	}
	goldenOpenCodeError = []wantEpisode{
		{StoppedOnError, "APIError (429)", 0, 13997, -1},
	}
	goldenClaudeStopFailure = []wantEpisode{
		{StoppedOnError, "rate_limit", 1, 559, 709},
		{StoppedOnError, "server_error", 2, 880, 2196},
	}
)
