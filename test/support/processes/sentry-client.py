"""
An app instrumented with Sentry's Python SDK (Debian's python3-sentry-sdk), sending to a Sluice
collector's Sentry endpoints. One scenario per run, given as JSON in argv[1]:

  {"dsn": "http://<key>@127.0.0.1:<port>/<project>", "release": "...", "environment": "...",
   "resend_id": "<32 hex>", "tracing": false}

It captures an exception (ValueError from charge_card), an info message, and the event
`resend_id` twice (a resend: the same event_id and timestamp, a naive UTC time as this SDK writes
them), flushes, and prints one line:
{"event": "done", "exception_id": ..., "info_id": ..., "statuses": [...]}.
With "tracing": true it sends one transaction with a child span instead, and prints its event id
and the transactions as sent.
"""
import json
import sys
import time
from datetime import datetime

import sentry_sdk
from sentry_sdk.transport import HttpTransport

scenario = json.loads(sys.argv[1])
statuses = []


transactions = []


class RecordingTransport(HttpTransport):
    """The SDK's own HTTP transport, recording each answer's status and the transactions sent."""

    def _update_rate_limits(self, response):
        statuses.append(response.status)
        return super()._update_rate_limits(response)

    def capture_envelope(self, envelope):
        for item in envelope.items:
            if item.headers.get("type") == "transaction":
                transactions.append(item.payload.json)
        return super().capture_envelope(envelope)


sentry_sdk.init(
    dsn=scenario["dsn"],
    release=scenario.get("release"),
    environment=scenario.get("environment"),
    transport=RecordingTransport,
    traces_sample_rate=1.0 if scenario.get("tracing") else None,
)
sentry_sdk.set_tag("route", "/checkout")

if scenario.get("tracing"):
    # A transaction `checkout` (op http.server) with a child span `SELECT 1` (op db), and nothing else.
    transaction = sentry_sdk.start_transaction(name="checkout", op="http.server")
    with transaction.start_child(op="db", description="SELECT 1"):
        time.sleep(0.02)
    transaction.set_status("ok")
    transaction_id = transaction.finish()
    sentry_sdk.flush(timeout=10)
    print(json.dumps({"event": "done", "transaction_id": transaction_id, "transactions": transactions, "statuses": statuses}))
    sys.exit(0)


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
