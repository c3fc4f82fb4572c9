package redis

import (
	"fmt"

	"github.com/gopowertools/lambda/powertools/idempotency"
	"github.com/redis/go-redis/v9"
)

// requestError puts err, from the command op sent for key, into the
// vocabulary of [idempotency.Store]: a key that holds another type than a
// hash (the server's WRONGTYPE, raised inside the script) is a record that
// cannot be read, a [*idempotency.CorruptedRecordError]; a refusal of the
// store's first look at the server is its [*idempotency.ConfigError]. Every
// other error is the client's, wrapped with the operation and key:
// errors.As reaches it.
func requestError(op, key string, err error) error {
	if _, ok := err.(*idempotency.ConfigError); ok {
		return err
	}
	if redis.HasErrorPrefix(err, "WRONGTYPE") {
		return &idempotency.CorruptedRecordError{Key: key, Reason: "the Redis key holds another type than a hash"}
	}
	return fmt.Errorf("redis: %s %q: %w", op, key, err)
}
