// Package responsestore handles large and sensitive responses: [New] wraps
// any [idempotency.Store] (DynamoDB, Redis or Valkey, in memory) in one
// that compresses each response with gzip ([WithCompression]), encrypts it
// with a data key from AWS KMS ([WithKMS]) or the user's own AEAD
// ([WithAEAD]), and offloads it to Amazon S3 when it is too large for the
// record ([WithS3]). Nothing else about the record changes, so the
// middleware, the table and the other stores need no change:
//
//	store, err := responsestore.New(dynamoStore,
//		responsestore.WithCompression(4096),
//		responsestore.WithKMS(kms.NewFromConfig(cfg), "alias/idempotency"),
//		responsestore.WithS3(s3.NewFromConfig(cfg), "my-responses-bucket"))
//	lambda.Start(idempotency.Wrap(store, handler, ...))
//
// docs/large-and-sensitive-responses.md in the repository is the guide:
// the KMS key policy, the bucket and its lifecycle rule, the IAM
// permissions, costs and failure modes.
//
// # What is stored
//
// On a write (Complete, and Acquire or Reclaim of a record with a
// response), the response is gzipped when it is at least the compression
// threshold and gzip makes it smaller; then encrypted; then, when the
// result is over the offload threshold (350 KiB by default), written to S3
// as an object, before the record that points to it. The record's Response
// holds a binary envelope: a 4-byte magic, a version, flags
// saying which of these was done, the response's length, the KMS-encrypted
// data key, and either the body or the object's bucket, key, length and
// SHA-256. The store gives the inner store a copy of the record; the
// record it is given is never changed.
//
// A response that none of the options changes is stored as it is: the
// store writes exactly what the inner store alone would. A stored response
// that is not an envelope is returned as it is, so records written before
// the options were turned on stay readable. JSON never starts with the
// envelope's first byte, 0x89.
//
// On a read (the record that Acquire finds, and Get), the envelope is
// undone: the object is fetched and its length and SHA-256 checked, the
// body decrypted, gunzipped, and its length checked.
//
// # Encryption
//
// Both kinds of encryption bind the ciphertext to the function
// ([WithFunctionName], by default AWS_LAMBDA_FUNCTION_NAME) and the record
// key, as additional authenticated data: a ciphertext copied into another
// record, or read by another function, does not decrypt. With KMS, the
// data key is made under the encryption context {"idempotency-function":
// name} ([EncryptionContextKey]), which a key policy can require, and is
// reused for a bounded time and number of responses ([WithDataKeyCache]);
// the record key is not in the encryption context, since a data key made
// for one record key could then serve no other, but it is in the
// additional data.
//
// # Errors
//
// The store checks the KMS key and the S3 bucket, with one request each,
// once, before its first Acquire, and refuses one that KMS or S3 refuses
// with a [*idempotency.ConfigError]: found before any record is written,
// not by each response that then goes unstored. [New] sends no request.
//
// A record whose envelope cannot be read back (unknown version or flags,
// truncated, an object missing or not matching its SHA-256, a ciphertext
// that does not decrypt with this key, function and record key, a gzip
// stream of another length) gives a [*idempotency.CorruptedRecordError]:
// the middleware fails closed and does not run the handler. A failure to
// reach S3 or KMS while reading is returned as it is (the middleware makes
// it a [*idempotency.PersistenceError]; a retry can succeed).
//
// A response that cannot be encrypted or offloaded on a write gives a
// [*ResponseError], which matches [idempotency.ErrUnstorableResponse]: the
// middleware completes the record without the response, so the handler's
// effect is recorded and not run again, and duplicates get a
// [*idempotency.ResponseNotStoredError]. The inner store's own errors are
// returned as they are. When the inner store refuses a record as too
// large, the store offloads the body (with [WithS3]) and writes once more.
//
// # Crashes
//
// An object is written before the record that points to it, so a process
// that dies between the two leaves an object that no record points to,
// never a record that points to nothing: the record stays INPROGRESS
// until its lease ends, duplicates get an [*idempotency.InProgressError]
// until then, and the next one runs the handler again, as when a process
// dies after its handler returns without this package. A lifecycle rule
// deletes the orphan. Each object's key holds the record key's hash, the
// lease token and the body's hash, so a retried write never replaces an
// object that a record already points to.
//
// # Concurrency
//
// The store is safe for concurrent use, as the inner store is. The data
// key cache is guarded by a mutex; nothing runs in the background, and a
// cached key's age is checked when it is taken.
package responsestore
