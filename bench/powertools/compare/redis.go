package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// benchDB is the logical database the Redis measurements use, emptied
// before the run and after each path, so that the test servers' other keys
// (database 0) are never touched.
const benchDB = 15

// compareRedis measures every implementation on the Valkey server of
// TEST_VALKEY_ADDR, and writes the section "## Side by side with
// Powertools on Redis (Valkey)". For each path the implementations take
// turns, repeat rounds of one run each, so that a change in the machine's
// load (it is shared) falls on all of them alike; then each runs once more
// under MONITOR, which counts the commands (monitor below), so that the
// monitor's own cost stays out of the timed runs.
func compareRedis(doc string, impls []impl, n, nCache, repeat int) error {
	addr := os.Getenv("TEST_VALKEY_ADDR")
	if addr == "" {
		return fmt.Errorf("TEST_VALKEY_ADDR is not set: run under scripts/with-servers.sh with valkey-server installed (make tools), or leave redis out of -sections")
	}
	url := fmt.Sprintf("redis://%s/%d", addr, benchDB)
	ctx := context.Background()
	admin := redis.NewClient(&redis.Options{Addr: addr, DB: benchDB})
	defer admin.Close()
	server, err := serverVersion(ctx, admin)
	if err != nil {
		return err
	}
	if err := admin.FlushDB(ctx).Err(); err != nil {
		return err
	}
	var rows []row
	for _, scenario := range []string{"new", "dup", "cache"} {
		var cell []impl // the implementations measured on this path
		for _, im := range impls {
			// The floors have no cache path: it is the same as dup, with
			// no record to find.
			if im.floorOn == "" || im.floorOn == "redis" && scenario != "cache" && (!im.newOnly || scenario == "new") {
				cell = append(cell, im)
			}
		}
		calls := n
		if scenario == "cache" {
			calls = nCache
		}
		args := []string{"--store", "redis", "--scenario", scenario, "--n", fmt.Sprint(calls), "--endpoint", url}
		runs := make([][]measurement, len(cell))
		for round := range repeat {
			for i, im := range cell {
				m, err := measure(im, nil, append(args, profileArgs(im, "redis", scenario, round)...)...)
				if err != nil {
					return fmt.Errorf("%s redis %s: %w", im.name, scenario, err)
				}
				runs[i] = append(runs[i], m)
				logMeasurement(im.name, "redis", scenario, m)
			}
		}
		for i, im := range cell {
			mon := newMonitor(addr)
			counted, err := measure(im, mon, args...)
			mon.Close()
			if err != nil {
				return fmt.Errorf("%s redis %s, counting: %w", im.name, scenario, err)
			}
			r := summarize(im.name, "redis", scenario, runs[i])
			r.reqPerCall = float64(counted.requests) / float64(counted.Calls)
			r.commands = perCall(counted.commands, counted.Calls)
			rows = append(rows, r)
		}
		if err := admin.FlushDB(ctx).Err(); err != nil {
			return err
		}
	}
	printAboveFloors(rows)
	if doc == "" {
		return nil
	}
	section := renderRedis(rows, n, nCache, repeat, server)
	if err := replaceSection(doc, "## Side by side with Powertools on Redis (Valkey)", section); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote the Redis section into %s\n", doc)
	return nil
}

// serverVersion is the server's name and version, from INFO server.
func serverVersion(ctx context.Context, c *redis.Client) (string, error) {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", fmt.Errorf("TEST_VALKEY_ADDR: %w", err)
	}
	for _, name := range []string{"valkey_version", "redis_version"} {
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return strings.TrimSuffix(name, "_version") + " " + v, nil
			}
		}
	}
	return "unknown server", nil
}

// monitor counts the commands that clients send to the server, as the
// server sees them: from its MONITOR feed, where each command a client
// sent is a line, and each command a Lua script ran is a line marked
// "lua", not counted (it is no round trip). Every implementation is
// counted the same way, by the server, whatever its client library.
//
// reset starts the feed once the measured process has prepared, so that
// its preparation's commands never reach it. The feed is asynchronous, so
// the count is framed by two markers, ECHO commands with a unique text
// sent from another connection: reset reads the feed up to the first;
// read sends the second once the process has reported, and counts the
// lines up to it. Lines of other clients at the same time would be
// counted too: the test servers of with-servers.sh serve nothing else
// during the run.
type monitor struct {
	addr   string
	conn   net.Conn
	feed   *bufio.Reader
	marker *redis.Client
	seq    int
}

func newMonitor(addr string) *monitor {
	return &monitor{addr: addr, marker: redis.NewClient(&redis.Options{Addr: addr})}
}

func (m *monitor) Close() {
	if m.conn != nil {
		m.conn.Close()
	}
	m.marker.Close()
}

func (m *monitor) reset() error {
	conn, err := net.DialTimeout("tcp", m.addr, 10*time.Second)
	if err != nil {
		return err
	}
	m.conn, m.feed = conn, bufio.NewReaderSize(conn, 1<<16)
	conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		return err
	}
	if line, err := m.feed.ReadString('\n'); err != nil || line != "+OK\r\n" {
		return fmt.Errorf("MONITOR answered %q, %v", line, err)
	}
	_, err = m.until(nil)
	return err
}

func (m *monitor) read(meas *measurement) error {
	counts := map[string]int{}
	n, err := m.until(counts)
	meas.requests, meas.commands = n, counts
	return err
}

// until sends a marker and reads the feed up to it. With counts, it
// counts the commands clients sent by name, and returns their total.
func (m *monitor) until(counts map[string]int) (int, error) {
	m.seq++
	text := fmt.Sprintf("bench-compare-marker-%d-%d", os.Getpid(), m.seq)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.marker.Echo(ctx, text).Err(); err != nil {
		return 0, err
	}
	m.conn.SetReadDeadline(time.Now().Add(time.Minute))
	quoted := `"echo" "` + text + `"`
	total := 0
	for {
		line, err := m.feed.ReadString('\n')
		if err != nil {
			return 0, fmt.Errorf("MONITOR feed: %w", err)
		}
		if strings.Contains(line, quoted) {
			return total, nil
		}
		name, fromClient := command(line)
		if counts != nil && fromClient {
			counts[name]++
			total++
		}
	}
}

// command reads a MONITOR line, `+1796170457.829239 [15 127.0.0.1:36140]
// "evalsha" "..." ...`, or `[15 lua]` for a script's command: the
// command's name, in capitals, and whether a client sent it.
func command(line string) (name string, fromClient bool) {
	_, rest, ok := strings.Cut(line, " [")
	if !ok {
		return "", false
	}
	source, rest, ok := strings.Cut(rest, "] \"")
	if !ok {
		return "", false
	}
	name, _, _ = strings.Cut(rest, "\"")
	return strings.ToUpper(name), !strings.HasSuffix(source, " lua")
}

func perCall(counts map[string]int, calls int) map[string]float64 {
	per := make(map[string]float64, len(counts))
	for name, n := range counts {
		per[name] = float64(n) / float64(calls)
	}
	return per
}
