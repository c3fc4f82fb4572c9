// Keys that Powertools for AWS Lambda (TypeScript) computes, in bulk: the
// counterpart of keys.py, with the same protocol. Run with the packages of
// .tools/bench-node (POWERTOOLS_NODE_MODULES names its node_modules).
//
// The key is what makeIdempotent stores the record under, with keyPrefix
// "p"; "skip" is true when the handler would run without idempotency (the
// key expression selects null or nothing). The event is decoded with
// JSON.parse, as the Node.js runtime decodes it.
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import path from 'node:path';

const require = createRequire(path.join(process.env.POWERTOOLS_NODE_MODULES, 'noop.js'));
const { IdempotencyConfig } = require('@aws-lambda-powertools/idempotency');
const { BasePersistenceLayer } = require('@aws-lambda-powertools/idempotency/persistence');
const { search } = require('@aws-lambda-powertools/jmespath');

class Layer extends BasePersistenceLayer {
  async _getRecord() { throw new Error('no store'); }
  async _putRecord() { throw new Error('no store'); }
  async _updateRecord() { throw new Error('no store'); }
  async _deleteRecord() { throw new Error('no store'); }
}

console.warn = () => {}; // "No value found for idempotency_key"
const layers = new Map();
const out = [];
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const c = JSON.parse(line);
  let result;
  try {
    const id = JSON.stringify([c.expr ?? '', c.validation ?? '', c.hash ?? 'md5']);
    let entry = layers.get(id);
    if (entry === undefined) {
      const config = new IdempotencyConfig({
        eventKeyJmesPath: c.expr ?? '',
        payloadValidationJmesPath: c.validation || undefined,
        hashFunction: c.hash ?? 'md5',
      });
      const layer = new Layer();
      layer.configure({ config, keyPrefix: 'p' });
      entry = { layer, config };
      layers.set(id, entry);
    }
    const data = JSON.parse(c.event);
    // IdempotencyHandler.shouldSkipIdempotency
    const selection = entry.config.eventKeyJmesPath === '' ? data
      : search(entry.config.eventKeyJmesPath, data, entry.config.jmesPathOptions);
    if (selection === undefined || selection === null) {
      result = { key: '', skip: true };
    } else {
      result = { key: entry.layer.getHashedIdempotencyKey(data), payload: entry.layer.getHashedPayload(data), skip: false };
    }
  } catch (err) {
    result = { error: `${err.name}: ${err.message}` };
  }
  out.push(JSON.stringify(result));
}
process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
