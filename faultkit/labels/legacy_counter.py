"""The adapter to minishop's retired request counter: the one module of faultkit that names it.

Until issue 30 minishop served a hand-made `http_requests_total{status}` counter, and labels named
the request series they derive from a bundle after it (`http_requests_total{service="cart",
status="5xx"}`), as the catalog's hand-written `evidence:` declares them. The counts now come from
OpenTelemetry signals (apps/signals.py), but a label's series keeps this name: labels rebuild byte
for byte from the bundles already sealed, and declared evidence keeps matching.
"""

REQUESTS_SERIES = "http_requests_total"
