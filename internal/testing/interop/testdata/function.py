"""A Powertools for AWS Lambda (Python) function, driven by the Go tests.

The handler is app.lambda_handler under @idempotent, with a
DynamoDBPersistenceLayer on the moto server at INTEROP_ENDPOINT, in a
function named by AWS_LAMBDA_FUNCTION_NAME: its key prefix is
"<function>.app.lambda_handler". It returns the response a request gives
it. Requests are JSON lines on stdin, each answered by one JSON line:

    {"op": "invoke", "table": T, "sk": "", "expr": E, "validation": V,
     "event": "<the event's JSON text>", "response": R}
        -> {"result": ..., "error": "", "calls": 1}
    {"op": "hold", ...the same, "id": "h1"}
        starts the invocation in a thread whose handler, once called,
        waits for the release
        -> {"held": true} once the handler runs (its INPROGRESS record is
           written), or the invocation's answer if it ends before
    {"op": "release", "id": "h1"}
        -> the held invocation's answer

"error" is the exception's class name and message; "calls" counts the
handler's calls during the invocation.
"""

import json
import os
import sys
import threading

import boto3
from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer, IdempotencyConfig, idempotent

client = boto3.client(
    "dynamodb",
    endpoint_url=os.environ["INTEROP_ENDPOINT"],
    region_name="us-east-1",
    aws_access_key_id="test",
    aws_secret_access_key="test",
)


class Context:
    """The parts of the Lambda context the decorator reads."""

    function_name = os.environ["AWS_LAMBDA_FUNCTION_NAME"]
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self):
        return 30000


# What the running invocation's handler does, per thread.
current = threading.local()
handlers = {}


def handler_for(req):
    """The decorated handler of one table and configuration."""
    config_id = (req["table"], req.get("sk", ""), req.get("expr", ""), req.get("validation", ""))
    h = handlers.get(config_id)
    if h is None:

        def lambda_handler(event, context):
            current.calls += 1
            if current.started is not None:
                current.started.set()
                current.release.wait()
            return current.response

        # As Lambda imports it from app.py: the key prefix names it.
        lambda_handler.__module__ = "app"
        lambda_handler.__qualname__ = "lambda_handler"
        layer = DynamoDBPersistenceLayer(table_name=config_id[0], sort_key_attr=config_id[1] or None, boto3_client=client)
        config = IdempotencyConfig(event_key_jmespath=config_id[2], payload_validation_jmespath=config_id[3])
        h = idempotent(config=config, persistence_store=layer)(lambda_handler)
        handlers[config_id] = h
    return h


def invoke(req, started=None, release=None):
    current.calls, current.response = 0, req.get("response")
    current.started, current.release = started, release
    try:
        result = handler_for(req)(json.loads(req["event"]), Context())
        return {"result": result, "error": "", "calls": current.calls}
    except Exception as exc:  # reported to the test, which checks the class
        return {"result": None, "error": f"{type(exc).__name__}: {exc}", "calls": current.calls}


def main():
    held = {}
    for line in sys.stdin:
        req = json.loads(line)
        op = req["op"]
        if op == "invoke":
            answer = invoke(req)
        elif op == "hold":
            started, release, box = threading.Event(), threading.Event(), {}
            thread = threading.Thread(target=lambda: box.update(invoke(req, started, release)))
            thread.start()
            while not started.wait(0.01) and thread.is_alive():
                pass
            if started.is_set():
                held[req["id"]] = (thread, release, box)
                answer = {"held": True}
            else:
                thread.join()
                answer = box
        elif op == "release":
            thread, release, box = held.pop(req["id"])
            release.set()
            thread.join()
            answer = box
        else:
            answer = {"error": f"unknown op {op}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
