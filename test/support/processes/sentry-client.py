"""
An app instrumented with Sentry's Python SDK (Debian's python3-sentry-sdk), sending to a Sluice
collector's Sentry endpoints. One scenario per run, given as JSON in argv[1]:

  {"dsn": "http://<key>@127.0.0.1:<port>/<project>", "release": "...", "environment": "...",
   "resend_id": "<32 hex>"}

It captures an exception (ValueError from charge_card), an info message, and the event
`resend_id` twice (a resend: the same event_id and timestamp, a naive UTC time as this SDK writes
them), flushes, and prints one line:
{"event": "done", "exception_id": ..., "info_id": ..., "statuses": [...]}.
"""
import json
import sys
from datetime import datetime

import sentry_sdk
from sentry_sdk.transport import HttpTransport

scenario = json.loads(sys.argv[1])
statuses = []


class RecordingTransport(HttpTransport):
    """The SDK's own HTTP transport, recording each answer's status."""

    def _update_rate_limits(self, response):
        statuses.append(response.status)
        return super()._update_rate_limits(response)


sentry_sdk.init(
    dsn=scenario["dsn"],
    release=scenario.get("release"),
    environment=scenario.get("environment"),
    transport=RecordingTransport,
)
sentry_sdk.set_tag("route", "/checkout")


def charge_card(amount):
    raise ValueError("card declined for %d" % amount)


try:
    charge_card(42)
except ValueError:
    exception_id = sentry_sdk.capture_exception()
info_id = sentry_sdk.capture_message("cart updated", level="info")
resent = {
    "event_id": scenario["resend_id"],
    "timestamp": datetime.utcnow().isoformat(),
    "message": "sent twice",
    "level": "error",
}
for _ in range(2):
    sentry_sdk.capture_event(dict(resent))
sentry_sdk.flush(timeout=10)
print(json.dumps({"event": "done", "exception_id": exception_id, "info_id": info_id, "statuses": statuses}))
