"""An OTLP/HTTP trace receiver for keel's tests, decoding with the
OpenTelemetry project's own generated messages (opentelemetry-proto).

    otlp_receiver.py [--discard] [--port N]

Listens on 127.0.0.1 (a free port, or N), prints
`listening http://127.0.0.1:PORT`, then answers:

- POST /v1/traces: an ExportTraceServiceRequest (application/x-protobuf,
  gzip or not); each span is kept, flattened to JSON.
- GET /spans: every span kept so far, as a JSON list of objects with
  trace_id, span_id, parent_span_id (hex), name, kind (SPAN_KIND_*),
  attributes, links [{trace_id, span_id}], events [{name, attributes}],
  status (STATUS_CODE_*),
  resource (attributes of the resource), start/end (ns).
- GET /requests: how many export requests arrived, and their headers.

With --discard (the benchmark's collector), an export is read and answered
but neither decoded nor kept: only requests and bytes are counted.
"""

import gzip
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

LOCK = threading.Lock()
SPANS = []
REQUESTS = []
DISCARD = "--discard" in sys.argv
RECEIVED = {"requests": 0, "bytes": 0}


def value(v):
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in v.kvlist_value.values}
    if kind == "bytes_value":
        return v.bytes_value.hex()
    return getattr(v, kind)


def attributes(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def flatten(resource, span):
    return {
        "trace_id": span.trace_id.hex(),
        "span_id": span.span_id.hex(),
        "parent_span_id": span.parent_span_id.hex(),
        "name": span.name,
        "kind": Span.SpanKind.Name(span.kind),
        "attributes": attributes(span.attributes),
        "links": [
            {"trace_id": l.trace_id.hex(), "span_id": l.span_id.hex()}
            for l in span.links
        ],
        "events": [
            {"name": e.name, "attributes": attributes(e.attributes)}
            for e in span.events
        ],
        "status": Status.StatusCode.Name(span.status.code),
        "resource": resource,
        "start": span.start_time_unix_nano,
        "end": span.end_time_unix_nano,
    }


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces":
            return self.reply(404, b"not found", "text/plain")
        if DISCARD:
            with LOCK:
                RECEIVED["requests"] += 1
                RECEIVED["bytes"] += len(raw)
            body = ExportTraceServiceResponse().SerializeToString()
            return self.reply(200, body, "application/x-protobuf")
        if self.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        req = ExportTraceServiceRequest.FromString(raw)
        with LOCK:
            REQUESTS.append({k.lower(): v for k, v in self.headers.items()})
            for rs in req.resource_spans:
                resource = attributes(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        SPANS.append(flatten(resource, span))
        body = ExportTraceServiceResponse().SerializeToString()
        self.reply(200, body, "application/x-protobuf")

    def do_GET(self):
        with LOCK:
            if self.path == "/spans":
                body = json.dumps(SPANS)
            elif self.path == "/requests":
                body = json.dumps({"count": len(REQUESTS), "headers": REQUESTS})
            elif self.path == "/received":
                body = json.dumps(RECEIVED)
            else:
                return self.reply(404, b"not found", "text/plain")
        self.reply(200, body.encode(), "application/json")


def main():
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
