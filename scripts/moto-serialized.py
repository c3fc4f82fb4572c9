"""moto's server, handling one request at a time.

    .tools/venv/bin/python scripts/moto-serialized.py --host 127.0.0.1 --port PORT

This is what `moto_server -H HOST -p PORT` runs (moto's own WSGI app, request
handler and threaded werkzeug server), with one change: a lock around each
request. Stock moto_server runs requests on parallel threads, and its
DynamoDB backend checks a ConditionExpression and writes the item without a
lock between the two, so simultaneous conditional puts on one key can both
succeed (seen here with moto 5.2.5: 2 winners of 32 in some rounds of
internal/testing/testenv/storm_test.go). DynamoDB never allows that, and the
library's concurrency tests depend on it; with the lock every request is
atomic, which is at least as strict as DynamoDB's per-item atomicity.

It reaches into moto.moto_server.werkzeug_app, which is not a public API:
moto is pinned in scripts/tools.sh, and the storm test proves this still
works after any change of that pin.
"""

import argparse
import os
import threading

from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import run_simple


class Serialized:
    """A WSGI app that runs the app it wraps for one request at a time."""

    def __init__(self, app):
        self.app = app
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self.lock:
            # The body is produced inside the lock too: a WSGI app may do its
            # work lazily while being iterated.
            result = self.app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    # As moto_server does: some services put the port into URLs they return.
    os.environ.setdefault("MOTO_PORT", str(args.port))
    app = Serialized(DomainDispatcherApplication(create_backend_app))
    run_simple(args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()
