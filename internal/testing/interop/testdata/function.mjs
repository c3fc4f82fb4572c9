// A Powertools for AWS Lambda (TypeScript) function, driven by the Go
// tests: the counterpart of function.py, with the same protocol. The
// handler is wrapped by makeIdempotent, with a DynamoDBPersistenceLayer on
// the moto server at INTEROP_ENDPOINT, in a function named by
// AWS_LAMBDA_FUNCTION_NAME, its key prefix. Run with the packages of
// .tools/bench-node (POWERTOOLS_NODE_MODULES names its node_modules).
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import path from 'node:path';

const require = createRequire(path.join(process.env.POWERTOOLS_NODE_MODULES, 'noop.js'));
const { makeIdempotent, IdempotencyConfig } = require('@aws-lambda-powertools/idempotency');
const { DynamoDBPersistenceLayer } = require('@aws-lambda-powertools/idempotency/dynamodb');

const context = {
  functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${process.env.AWS_LAMBDA_FUNCTION_NAME}`,
  memoryLimitInMB: '128',
  awsRequestId: '00000000-0000-0000-0000-000000000000',
  logGroupName: '/aws/lambda/interop',
  logStreamName: 'interop',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 30000,
  done() {}, fail() {}, succeed() {},
};

const handlers = new Map();

// handlerFor returns the idempotent handler of one table and
// configuration. What it does on a call comes with the event's invocation
// (a WeakMap from the event object to its invocation).
const invocations = new WeakMap();
const handlerFor = (req) => {
  const id = JSON.stringify([req.table, req.sk ?? '', req.expr ?? '', req.validation ?? '']);
  let h = handlers.get(id);
  if (h === undefined) {
    const persistenceStore = new DynamoDBPersistenceLayer({
      tableName: req.table,
      sortKeyAttr: req.sk || undefined,
      clientConfig: {
        endpoint: process.env.INTEROP_ENDPOINT,
        region: 'us-east-1',
        credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      },
    });
    const config = new IdempotencyConfig({
      eventKeyJmesPath: req.expr ?? '',
      payloadValidationJmesPath: req.validation || undefined,
    });
    h = makeIdempotent(async (event) => {
      const inv = invocations.get(event);
      inv.calls++;
      if (inv.started !== undefined) {
        inv.started();
        await inv.release;
      }
      return inv.response;
    }, { persistenceStore, config });
    handlers.set(id, h);
  }
  return h;
};

const invoke = async (req, inv) => {
  const event = JSON.parse(req.event);
  invocations.set(event, inv);
  try {
    const result = await handlerFor(req)(event, context);
    return { result: result ?? null, error: '', calls: inv.calls };
  } catch (err) {
    return { result: null, error: `${err.name}: ${err.message}`, calls: inv.calls };
  }
};

const held = new Map();
const out = (answer) => process.stdout.write(`${JSON.stringify(answer)}\n`);
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const req = JSON.parse(line);
  switch (req.op) {
    case 'invoke':
      out(await invoke(req, { calls: 0, response: req.response }));
      break;
    case 'hold': {
      let release;
      const inv = {
        calls: 0,
        response: req.response,
        release: new Promise((resolve) => { release = resolve; }),
      };
      const running = new Promise((resolve) => { inv.started = () => resolve('started'); });
      const done = invoke(req, inv);
      const first = await Promise.race([running, done]);
      if (first === 'started') {
        held.set(req.id, { release, done });
        out({ held: true });
      } else {
        out(first); // ended before its handler ran
      }
      break;
    }
    case 'release': {
      const h = held.get(req.id);
      held.delete(req.id);
      h.release();
      out(await h.done);
      break;
    }
    default:
      out({ error: `unknown op ${req.op}` });
  }
}
