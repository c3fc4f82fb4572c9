// Powertools for AWS Lambda (TypeScript)'s side of the comparison
// (../compare), run with the packages of .tools/bench-node:
//
//   node bench.mjs --store dynamodb|redis|memory --scenario new|dup|cache --n N [--endpoint URL --table T]
//
// The same trivial handler as ../gobench, wrapped by makeIdempotent, called
// in a loop in this process with a fake Lambda context, on DynamoDB
// (DynamoDBPersistenceLayer; --endpoint is the DynamoDB URL), on Redis or
// Valkey (CachePersistenceLayer with an @redis/client client, as the
// layer's documentation makes it; --endpoint is a redis:// URL), or on the
// minimal in-memory layer below. Protocol: the preparation (for dup and
// cache, N calls that leave N completed records), then READY, a line on
// stdin, the N measured calls, one JSON line of results. The events are
// JSON text made before the clock starts; each measured call parses its
// event and serializes the response, as the Node.js runtime does around the
// handler.
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { readFileSync } from 'node:fs';

const modules = path.resolve(process.env.BENCH_NODE_MODULES ?? '.', 'node_modules');
const require = createRequire(path.join(modules, 'noop.js'));
const { makeIdempotent, IdempotencyConfig, IdempotencyItemAlreadyExistsError, IdempotencyItemNotFoundError } =
  require('@aws-lambda-powertools/idempotency');
const { BasePersistenceLayer } = require('@aws-lambda-powertools/idempotency/persistence');
const { DynamoDBPersistenceLayer } = require('@aws-lambda-powertools/idempotency/dynamodb');
const { CachePersistenceLayer } = require('@aws-lambda-powertools/idempotency/cache');
const versionOf = (pkg) => JSON.parse(readFileSync(path.join(modules, pkg, 'package.json'), 'utf8')).version;
const version = versionOf('@aws-lambda-powertools/idempotency');

// A minimal in-memory layer with DynamoDB's put condition: a record blocks
// a new one while it has not expired and, when in progress, while its
// in-progress expiry has not passed.
class MemoryPersistenceLayer extends BasePersistenceLayer {
  #items = new Map();

  async _getRecord(key) {
    const rec = this.#items.get(key);
    if (rec === undefined) throw new IdempotencyItemNotFoundError();
    return rec;
  }

  async _putRecord(record) {
    const old = this.#items.get(record.idempotencyKey);
    if (old !== undefined) {
      const now = Date.now();
      const expired = old.expiryTimestamp !== undefined && old.expiryTimestamp * 1000 < now;
      const leaseOver = old.getStatus() === 'INPROGRESS' &&
        old.inProgressExpiryTimestamp !== undefined && old.inProgressExpiryTimestamp < now;
      if (!expired && !leaseOver) {
        throw new IdempotencyItemAlreadyExistsError(`record exists: ${record.idempotencyKey}`, old);
      }
    }
    this.#items.set(record.idempotencyKey, record);
  }

  async _updateRecord(record) {
    this.#items.set(record.idempotencyKey, record);
  }

  async _deleteRecord(record) {
    this.#items.delete(record.idempotencyKey);
  }
}

const fakeContext = {
  functionName: 'bench',
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:bench',
  memoryLimitInMB: '128',
  awsRequestId: '00000000-0000-0000-0000-000000000000',
  logGroupName: '/aws/lambda/bench',
  logStreamName: 'bench',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 30000,
  done() {}, fail() {}, succeed() {},
};

const { values: a } = parseArgs({
  options: {
    store: { type: 'string', default: 'memory' },
    scenario: { type: 'string', default: 'new' },
    n: { type: 'string', default: '1000' },
    endpoint: { type: 'string', default: '' },
    table: { type: 'string', default: '' },
  },
});
const n = Number(a.n);
process.env.AWS_LAMBDA_FUNCTION_NAME ??= 'bench';

let persistenceStore;
let client = `@aws-sdk/client-dynamodb ${versionOf('@aws-sdk/client-dynamodb')}`;
if (a.store === 'dynamodb') {
  persistenceStore = new DynamoDBPersistenceLayer({
    tableName: a.table,
    clientConfig: {
      endpoint: a.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    },
  });
} else if (a.store === 'redis') {
  const { createClient } = require('@redis/client');
  persistenceStore = new CachePersistenceLayer({ client: await createClient({ url: a.endpoint }).connect() });
  client = `@redis/client ${versionOf('@redis/client')}`;
} else {
  persistenceStore = new MemoryPersistenceLayer();
}
const config = new IdempotencyConfig({
  eventKeyJmesPath: 'id',
  useLocalCache: a.scenario === 'cache',
  maxLocalCacheSize: Math.max(n, 1000),
});
const handler = makeIdempotent(async (event, _context) => ({ ok: true, id: event.id }), { persistenceStore, config });

const run = `ts-${process.pid}-${Date.now()}`;
// Each event is JSON text, as the Lambda runtime receives it; a call parses
// it and serializes the response, as the runtime does around the handler,
// and as the Go side's Invoke does (it is given bytes, and returns bytes).
const events = Array.from({ length: n }, (_, i) => JSON.stringify({ id: `${run}-${i}`, amount: 1250, currency: 'EUR' }));
const warm = a.scenario === 'new'
  ? Array.from({ length: Math.min(n, 50) }, (_, i) => JSON.stringify({ id: `${run}-warm-${i}`, amount: 1250, currency: 'EUR' }))
  : events;
const invoke = async (raw) => JSON.stringify(await handler(JSON.parse(raw), fakeContext));
for (const e of warm) await invoke(e);

process.stdout.write('READY\n');
const rl = createInterface({ input: process.stdin });
await new Promise((resolve) => rl.once('line', resolve));
rl.close();
const cpu0 = process.cpuUsage();
const start = process.hrtime.bigint();
let errors = 0;
for (const e of events) {
  try {
    await invoke(e);
  } catch {
    errors++;
  }
}
const wall = Number(process.hrtime.bigint() - start) / 1e9;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(JSON.stringify({
  calls: n, seconds: wall, cpu_seconds: (cpu.user + cpu.system) / 1e6, errors,
  version: `@aws-lambda-powertools/idempotency ${version}, ${client}, Node.js ${process.version}`,
}) + '\n');
// The Redis client's connection would keep the process alive.
process.exit(0);
