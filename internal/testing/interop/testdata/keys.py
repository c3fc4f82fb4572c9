"""Keys that Powertools for AWS Lambda (Python) computes, in bulk.

Reads JSON lines on stdin, one case each:

    {"event": "<the event's JSON text>", "expr": "...", "validation": "...", "hash": "md5"}

and writes one JSON line per case, in order:

    {"key": "p#...", "payload": "...", "skip": false}   or   {"error": "..."}

The key is what the @idempotent decorator stores the record under, with
key_prefix "p" (None when Powertools finds no key, "skip" true); payload is
the payload validation hash ("" without validation). The event is decoded
with json.loads, as the Lambda runtime decodes it.
"""

import json
import sys
import warnings

from aws_lambda_powertools.utilities.idempotency import BasePersistenceLayer, IdempotencyConfig


class Layer(BasePersistenceLayer):
    """The base layer's key and hash computation, with no store."""

    def _get_record(self, idempotency_key):
        raise NotImplementedError

    def _put_record(self, data_record):
        raise NotImplementedError

    def _update_record(self, data_record):
        raise NotImplementedError

    def _delete_record(self, data_record):
        raise NotImplementedError


def main():
    warnings.simplefilter("ignore")  # "No idempotency key value found"
    layers = {}
    out = sys.stdout
    for line in sys.stdin:
        case = json.loads(line)
        try:
            config = (case.get("expr", ""), case.get("validation", ""), case.get("hash", "md5"))
            layer = layers.get(config)
            if layer is None:
                layer = Layer()
                layer.configure(
                    IdempotencyConfig(event_key_jmespath=config[0], payload_validation_jmespath=config[1], hash_function=config[2]),
                    key_prefix="p",
                )
                layers[config] = layer
            data = json.loads(case["event"])
            key = layer._get_hashed_idempotency_key(data=data)
            result = {"key": key or "", "skip": key is None}
            if key is not None:
                result["payload"] = layer._get_hashed_payload(data=data)
        except Exception as exc:  # reported, and compared by the test
            result = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(result) + "\n")
    out.flush()


if __name__ == "__main__":
    main()
