package e2e

// usageBlock is the usage block of a receipt's telemetry_summary, nil
// when it has none. The stream's usage is checked for every harness with
// a reader in TestUsageEverywhere (usage_everywhere_test.go), which took
// over the one-shot Claude Code check this file held.
func usageBlock(r map[string]any) map[string]any {
	sum, _ := r["telemetry_summary"].(map[string]any)
	u, _ := sum["usage"].(map[string]any)
	return u
}
