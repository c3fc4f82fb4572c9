"""Powertools for AWS Lambda (Python)'s side of the comparison (../compare).

    bench.py --store dynamodb|redis|memory --scenario new|dup|cache --n N [--endpoint URL --table T]

The same trivial handler as ../gobench, under the @idempotent decorator,
called in a loop in this process with a fake Lambda context, on DynamoDB
(DynamoDBPersistenceLayer; --endpoint is the DynamoDB URL), on Redis or
Valkey (CachePersistenceLayer, alias RedisCachePersistenceLayer, with a
redis-py client as Powertools' documentation makes it; --endpoint is a
redis:// URL), or on the minimal in-memory layer below. Protocol: the
preparation (for dup and cache, N calls that leave N completed records),
then READY, a line on stdin, the N measured calls, one JSON line of results.

The events are JSON text, made before the clock starts; each measured call
parses its event and serializes the response, as the Python runtime does
around the handler and as the Go side's Invoke does.
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("AWS_LAMBDA_FUNCTION_NAME", "bench")
os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "ERROR")

import boto3  # noqa: E402
from aws_lambda_powertools.shared.version import VERSION  # noqa: E402
from aws_lambda_powertools.utilities.idempotency import (  # noqa: E402
    BasePersistenceLayer,
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (  # noqa: E402
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord  # noqa: E402


class MemoryPersistenceLayer(BasePersistenceLayer):
    """A minimal in-memory layer with DynamoDB's put condition: a record
    blocks a new one while it has not expired and, when in progress, while
    its in-progress expiry has not passed."""

    def __init__(self):
        super().__init__()
        self.items = {}

    def _get_record(self, idempotency_key) -> DataRecord:
        try:
            return self.items[idempotency_key]
        except KeyError:
            raise IdempotencyItemNotFoundError from None

    def _put_record(self, data_record: DataRecord) -> None:
        old = self.items.get(data_record.idempotency_key)
        now = time.time()
        if old is not None:
            expired = old.expiry_timestamp is not None and old.expiry_timestamp < now
            lease_over = (
                old.status == "INPROGRESS"
                and old.in_progress_expiry_timestamp is not None
                and old.in_progress_expiry_timestamp < now * 1000
            )
            if not (expired or lease_over):
                raise IdempotencyItemAlreadyExistsError(old_data_record=old)
        self.items[data_record.idempotency_key] = data_record

    def _update_record(self, data_record: DataRecord) -> None:
        self.items[data_record.idempotency_key] = data_record

    def _delete_record(self, data_record: DataRecord) -> None:
        self.items.pop(data_record.idempotency_key, None)


class FakeContext:
    """The parts of the Lambda context the decorator reads."""

    function_name = "bench"
    memory_limit_in_mb = 128
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:bench"
    aws_request_id = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self):
        return 30000


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--store", default="memory")
    p.add_argument("--scenario", default="new")
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--endpoint", default="")
    p.add_argument("--table", default="")
    a = p.parse_args()

    if a.store == "dynamodb":
        client = boto3.client(
            "dynamodb",
            endpoint_url=a.endpoint,
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
        )
        layer = DynamoDBPersistenceLayer(table_name=a.table, boto3_client=client)
        client_version = f"boto3 {boto3.__version__}"
    elif a.store == "redis":
        import redis

        # CachePersistenceLayer is RedisCachePersistenceLayer under its
        # newer name, which Powertools' documentation uses.
        from aws_lambda_powertools.utilities.idempotency.persistence.cache import CachePersistenceLayer

        layer = CachePersistenceLayer(client=redis.Redis.from_url(a.endpoint, decode_responses=True))
        client_version = f"redis-py {redis.__version__}"
    else:
        layer = MemoryPersistenceLayer()
        client_version = f"boto3 {boto3.__version__}"
    config = IdempotencyConfig(
        event_key_jmespath="id",
        use_local_cache=a.scenario == "cache",
        local_cache_max_items=max(a.n, 256),
    )

    @idempotent(config=config, persistence_store=layer)
    def handler(event, context):
        return {"ok": True, "id": event["id"]}

    run = f"py-{os.getpid()}-{time.time_ns()}"
    # Each event is JSON text, as the Lambda runtime receives it; a call
    # parses it and serializes the response, as the runtime does around the
    # handler, and as the Go side's Invoke does (it is given bytes, and
    # returns bytes).
    events = [json.dumps({"id": f"{run}-{i}", "amount": 1250, "currency": "EUR"}) for i in range(a.n)]
    ctx = FakeContext()

    def invoke(raw):
        return json.dumps(handler(json.loads(raw), ctx))

    warm = events
    if a.scenario == "new":
        warm = [json.dumps({"id": f"{run}-warm-{i}", "amount": 1250, "currency": "EUR"}) for i in range(min(a.n, 50))]
    for e in warm:
        invoke(e)

    print("READY", flush=True)
    sys.stdin.readline()
    cpu0, start = time.process_time(), time.perf_counter()
    errors = 0
    for e in events:
        try:
            invoke(e)
        except Exception:  # counted, not hidden: the driver reports errors
            errors += 1
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    print(json.dumps({"calls": a.n, "seconds": wall, "cpu_seconds": cpu, "errors": errors,
                      "version": f"aws-lambda-powertools {VERSION}, {client_version}, Python {sys.version.split()[0]}"}),
          flush=True)


if __name__ == "__main__":
    main()
