//go:build tools

// Package victorialogs pins the VictoriaLogs backend the end-to-end
// OpenTelemetry tests store the receipt logs in (it takes OTLP logs and
// answers LogsQL queries); `make victorialogs` builds it into
// .cache/victoria-logs. It is a module of its own so lifeloop's go.mod
// stays free of its dependencies.
package victorialogs

import _ "github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs"
