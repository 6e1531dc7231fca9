"""The telemetry stack of tools/telemetry: Jaeger v2 (an OpenTelemetry Collector distribution) and Prometheus."""
