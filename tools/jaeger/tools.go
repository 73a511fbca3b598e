//go:build tools

// Package jaeger pins the Jaeger v2 backend the end-to-end OpenTelemetry
// tests run against; `make jaeger` builds it into .cache/jaeger. It is a
// module of its own so lifeloop's go.mod stays free of Jaeger's
// dependencies.
package jaeger

import _ "github.com/jaegertracing/jaeger/cmd/jaeger"
