"""The current span's ids for a log line, so a log line leads to its trace."""

from opentelemetry import trace


def current() -> dict[str, str]:
    """{"trace_id", "span_id"} in W3C hex when inside a span, else nothing."""
    ctx = trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return {}
    return {"trace_id": format(ctx.trace_id, "032x"), "span_id": format(ctx.span_id, "016x")}
