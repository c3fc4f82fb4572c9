package redis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// The store's correctness under concurrency rests on one property of the
// server: of many simultaneous conditional writes on one key, exactly one
// succeeds. This test checks it on each server with raw commands, SET NX
// and a conditional EVAL like the store's, and no library code, so that a
// concurrency test of the store that passes on a server means something
// (internal/testing/testenv does the same for the DynamoDB servers).
const (
	stormRounds  = 20
	stormWriters = 32
)

// conditionalWrite is the shape of the store's scripts: read the key, and
// write it only when the read allows.
const conditionalWrite = `
if redis.call('EXISTS', KEYS[1]) == 1 then
	return 0
end
redis.call('HSET', KEYS[1], 'writer', ARGV[1])
return 1`

func TestConditionalWriteStorm(t *testing.T) {
	t.Parallel()
	writes := []struct {
		name string
		// write sends one writer's conditional write and reports whether
		// it won.
		write func(ctx context.Context, c redis.UniversalClient, key, writer string) (bool, error)
		// stored reads the winner's name back.
		stored func(ctx context.Context, c redis.UniversalClient, key string) (string, error)
	}{
		{
			name: "SET NX",
			write: func(ctx context.Context, c redis.UniversalClient, key, writer string) (bool, error) {
				reply, err := c.Do(ctx, "SET", key, writer, "NX").Result()
				if errors.Is(err, redis.Nil) {
					return false, nil
				}
				return reply == "OK", err
			},
			stored: func(ctx context.Context, c redis.UniversalClient, key string) (string, error) {
				return c.Do(ctx, "GET", key).Text()
			},
		},
		{
			name: "EVAL",
			write: func(ctx context.Context, c redis.UniversalClient, key, writer string) (bool, error) {
				n, err := c.Do(ctx, "EVAL", conditionalWrite, 1, key, writer).Int64()
				return n == 1, err
			},
			stored: func(ctx context.Context, c redis.UniversalClient, key string) (string, error) {
				return c.Do(ctx, "HGET", key, "writer").Text()
			},
		},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			c := srv.client(t)
			prefix := testPrefix(t)
			for _, w := range writes {
				t.Run(w.name, func(t *testing.T) {
					for round := range stormRounds {
						key := fmt.Sprintf("%sround-%d", prefix, round)
						stormRound(t, c, key, w.write, w.stored)
						c.Del(context.Background(), key)
					}
				})
			}
		})
	}
}

// stormRound lets stormWriters goroutines race one conditional write on a
// fresh key. It fails the test unless exactly one won, no write failed,
// and the stored value is the winner's.
func stormRound(t *testing.T, c redis.UniversalClient, key string,
	write func(context.Context, redis.UniversalClient, string, string) (bool, error),
	stored func(context.Context, redis.UniversalClient, string) (string, error)) {
	t.Helper()
	ctx := context.Background()
	start := make(chan struct{})
	won := make([]bool, stormWriters)
	errs := make([]error, stormWriters)
	var wg sync.WaitGroup
	for w := range stormWriters {
		wg.Go(func() {
			<-start // all commands leave together
			won[w], errs[w] = write(ctx, c, key, strconv.Itoa(w))
		})
	}
	close(start)
	wg.Wait()
	winner, wins := -1, 0
	for w := range stormWriters {
		if errs[w] != nil {
			t.Fatalf("%s: writer %d: %v", key, w, errs[w])
		}
		if won[w] {
			winner = w
			wins++
		}
	}
	if wins != 1 {
		t.Fatalf("%s: %d writers won the conditional write, want exactly 1", key, wins)
	}
	got, err := stored(ctx, c, key)
	if err != nil || got != strconv.Itoa(winner) {
		t.Fatalf("%s: stored writer %q (%v), want the winner %d", key, got, err, winner)
	}
}
