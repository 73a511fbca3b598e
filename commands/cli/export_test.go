package cli

// OrgLoopReceiverMain is the orgloop-receiver script command, for
// TestMain (main_test.go).
var OrgLoopReceiverMain = orgLoopReceiverMain
