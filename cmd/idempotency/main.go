// Command idempotency is the operator's tool for the idempotency records
// that github.com/gopowertools/lambda functions keep in DynamoDB, Redis or
// Valkey, and for the queues and templates around them.
//
//	go install github.com/gopowertools/lambda/cmd/idempotency@latest
//
// Usage:
//
//	idempotency <command> [flags] [arguments]
//
// The commands:
//
//	inspect   compute an event's key as its function does, and show the record
//	list      list records by status and age
//	forget    delete one record, so that its event is processed again
//	resolve   settle an UNCERTAIN record as completed, or as failed
//	redrive   move a dead-letter queue's messages back to their queue
//	lint      check a SAM template against the delivery rules
//
// Each takes -help. The AWS configuration (credentials, region, endpoints)
// comes from the SDK's usual sources: AWS_PROFILE, AWS_REGION,
// AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS and
// the shared configuration files. inspect, list, forget and resolve work
// on a DynamoDB table by default, and on the records of
// redis with --store redis: the server is
// --redis-url, else REDIS_URL, --cluster for a Redis Cluster.
//
// Exit status: 0 when the command did what was asked, 1 when it did not or
// found something wrong, 2 when the command line, or a file it names,
// cannot be read; 'idempotency help' lists the cases of each, and
// docs/operations.md, in the repository, has the same table and a session
// of each command.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/redis/go-redis/v9"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

const usage = `idempotency: the operator's tool for the idempotency records of
github.com/gopowertools/lambda functions, kept in DynamoDB, Redis or Valkey.

Usage:

	idempotency <command> [flags] [arguments]

Commands:

	inspect   compute an event's key as its function does, and show the record
	list      list records by status and age
	forget    delete one record, so that its event is processed again
	resolve   settle an UNCERTAIN record as completed, or as failed
	redrive   move a dead-letter queue's messages back to their queue
	lint      check a SAM template against the delivery rules

Run 'idempotency <command> -help' for a command's flags. AWS credentials,
region and endpoints come from the SDK's usual sources (AWS_PROFILE,
AWS_REGION, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS).
With --store redis, inspect, list, forget and resolve work on Redis or
Valkey: the server of --redis-url, else of REDIS_URL.

Exit status:

  0  the command did what was asked:
       - inspect: the key was computed and looked up, with or without a
         record
       - inspect of an event without a key, which the function runs without
         idempotency
       - list: the scan ended
       - forget: the record is deleted
       - forget of a key whose record is already gone, while its prefix has
         records
       - forget of a record deleted meanwhile, by another or by its own
         request whose reply was lost
       - forget --dry-run of a record it would delete
       - resolve --completed: the record is settled
       - resolve --failed of a record already gone
       - redrive: the messages moved
       - redrive --dry-run: it showed them
       - lint: no breach

  1  it did not, or found something wrong:
       - forget or resolve of a record that is not the one --token or
         --status names
       - forget of a record whose lease is live, without --force
       - forget of a record that cannot be read, without --force
       - forget of a record that changed meanwhile
       - forget of a key without a record, whose prefix has none in the
         store
       - resolve of a record that is not UNCERTAIN
       - resolve --completed of no record
       - an event its function refuses (not JSON, or without a key when one
         is required)
       - settings the function refuses at cold start
       - no table given, or named
       - an AWS error (a table that does not exist)
       - a Redis error (a server that does not answer)
       - redrive of a queue that is no queue's dead-letter queue, without
         --to (--dry-run too)
       - lint: a breach of the delivery rules, an unknown
         Metadata.Idempotency entry among them

  2  the command line, or a file it names, cannot be read:
       - an unknown flag
       - forget --status that is no status
       - a template that is missing or not YAML
       - a template without the function --resource
       - an unknown Metadata.Idempotency entry (inspect, forget, resolve)
       - an event file that cannot be opened
       - a --response file that cannot be opened
       - both --key and an event file, or neither
`

// cli is one run of the command: where it writes, what it reads of its
// environment, its clock and its AWS configuration, all replaceable in
// tests.
type cli struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// terminal reports whether stderr is a terminal: only then is a
	// progress line written there.
	terminal bool
	environ  func() []string // os.Environ
	now      func() time.Time
	// awsConfig loads the AWS configuration; config.LoadDefaultConfig
	// outside tests.
	awsConfig func(context.Context) (aws.Config, error)
	// redisClient makes the client of --store redis; newRedisClient
	// outside tests.
	redisClient func(rawURL string, cluster bool) (redis.UniversalClient, error)
	// scanCount is the COUNT of list's SCANs on Redis; 0 for
	// redis's default.
	scanCount int
	// pollEvery is how often redrive asks about a move task.
	pollEvery time.Duration
	// prefixScanLimit bounds the scan of forget and resolve --failed
	// for the records of a key's prefix (prefixScanLimit outside tests).
	prefixScanLimit int
	// openStore, when not nil, opens the store of the record commands
	// instead of the one the flags name: a test's in-memory store.
	openStore func(*storeFlags) (recordStore, error)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := &cli{
		stdin:    os.Stdin,
		stdout:   os.Stdout,
		stderr:   os.Stderr,
		terminal: isTerminal(os.Stderr),
		environ:  os.Environ,
		now:      time.Now,
		awsConfig: func(ctx context.Context) (aws.Config, error) {
			return config.LoadDefaultConfig(ctx)
		},
		redisClient:     newRedisClient,
		pollEvery:       5 * time.Second,
		prefixScanLimit: prefixScanLimit,
	}
	os.Exit(c.run(ctx, os.Args[1:]))
}

// isTerminal reports whether f is a character device, as a terminal is:
// enough to tell a person watching from a pipe or a file, without a
// dependency.
func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// run runs the command line args (without the program name) and returns
// the exit status.
func (c *cli) run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usage)
		return exitUsage
	}
	commands := map[string]func(context.Context, []string) int{
		"inspect": c.inspect,
		"list":    c.list,
		"forget":  c.forget,
		"resolve": c.resolve,
		"redrive": c.redrive,
		"lint":    c.lint,
	}
	switch name := args[0]; name {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(c.stdout, usage)
		return exitOK
	default:
		cmd, ok := commands[name]
		if !ok {
			fmt.Fprintf(c.stderr, "idempotency: unknown command %q\n\n%s", name, usage)
			return exitUsage
		}
		return cmd(ctx, args[1:])
	}
}

// flags returns the flag set of a command, whose -help prints synopsis
// and about, then the flags.
func (c *cli) flags(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: idempotency %s %s\n\n%s\nFlags:\n", name, synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses args into fs, flags before and after the arguments (an
// event file, then more flags, as people write them; "--" ends the
// flags), and checks the number of arguments. When ok is false, the
// command ends with status: the help was asked for, or the command line
// is wrong (which fs has reported).
func (c *cli) parse(fs *flag.FlagSet, args []string, minArgs, maxArgs int) (status int, ok bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return exitOK, false
			}
			return exitUsage, false
		}
		rest := fs.Args()
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			positional = append(positional, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	fs.Parse(append([]string{"--"}, positional...)) // fs.Args() is then the arguments
	if n := fs.NArg(); n < minArgs || n > maxArgs {
		fmt.Fprintf(c.stderr, "idempotency %s: want %s, got %d\n", fs.Name(), argCount(minArgs, maxArgs), n)
		fs.Usage()
		return exitUsage, false
	}
	return exitOK, true
}

func argCount(lo, hi int) string {
	switch {
	case lo == hi:
		return count(lo, "argument", "arguments")
	case lo == 0:
		return "at most " + count(hi, "argument", "arguments")
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}

// fail reports err for the command name and returns exitUsage for an
// *inputError, else exitFailed.
func (c *cli) fail(name string, err error) int {
	fmt.Fprintf(c.stderr, "idempotency %s: %s\n", name, escape(err.Error()))
	if _, ok := errors.AsType[*inputError](err); ok {
		return exitUsage
	}
	return exitFailed
}

// inputError is a command line, or a file that it names, that cannot be
// read: a template that is missing or not YAML, a resource it does not
// define, an event file that cannot be opened. The command ends with
// exitUsage, as for a bad flag: nothing was looked up.
type inputError struct{ err error }

func (e *inputError) Error() string { return e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// badInput returns err as an *inputError.
func badInput(err error) error { return &inputError{err} }

// getenv returns the environment variable name, or "".
func (c *cli) getenv(name string) string {
	for _, kv := range c.environ() {
		if n, v, _ := strings.Cut(kv, "="); n == name {
			return v
		}
	}
	return ""
}

// count writes n and the noun: one, or many unless n is 1.
func count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// usageError reports a bad command line and returns exitUsage.
func (c *cli) usageError(name string, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "idempotency %s: %s\n", name, escape(fmt.Sprintf(format, args...)))
	return exitUsage
}
