package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gopowertools/lambda/internal/testing/faultproxy"
)

// syscallCount is what one implementation asks of the kernel per call on
// DynamoDB, new keys: on this kind of machine (a virtual machine inside
// another) a system call, and above all a wake-up of another thread, costs
// far more than on bare metal, and that is where the CPU of the DynamoDB
// rows goes.
type syscallCount struct {
	impl    string
	perCall map[string]float64 // by system call
	total   float64
}

// countSyscalls runs each implementation under strace -f -c on DynamoDB,
// new keys, with small and then large calls, and keeps the difference
// divided by large-small, so that start-up and warm-up cancel out. With
// no strace on the machine it returns nil and the section says so.
func countSyscalls(impls []impl, proxy *faultproxy.Proxy, table, tmp string, small, large int) ([]syscallCount, error) {
	if _, err := exec.LookPath("strace"); err != nil {
		return nil, nil
	}
	var counts []syscallCount
	for i, im := range impls {
		if im.floorOn != "" && im.floorOn != "dynamodb" {
			continue // makes no request
		}
		var runs [2]map[string]int
		for j, n := range []int{small, large} {
			out := filepath.Join(tmp, fmt.Sprintf("strace-%d-%d.txt", i, n))
			traced := impl{name: im.name, cmd: func(args ...string) *exec.Cmd {
				c := im.cmd(args...)
				t := exec.Command("strace", append([]string{"-f", "-c", "-o", out, c.Path}, c.Args[1:]...)...)
				t.Env, t.Dir = c.Env, c.Dir
				return t
			}}
			if _, err := measure(traced, proxyCounter{proxy}, "--store", "dynamodb", "--scenario", "new", "--n", strconv.Itoa(n),
				"--endpoint", proxy.URL(), "--table", table); err != nil {
				return nil, fmt.Errorf("%s under strace: %w", im.name, err)
			}
			calls, err := readStraceSummary(out)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", im.name, err)
			}
			runs[j] = calls
		}
		c := syscallCount{impl: im.name, perCall: map[string]float64{}}
		for name, n := range runs[1] {
			if d := float64(n-runs[0][name]) / float64(large-small); d >= 0.05 {
				c.perCall[name] = d
				c.total += d
			}
		}
		counts = append(counts, c)
	}
	return counts, nil
}

// readStraceSummary reads the table of strace -c: the calls column of each
// system call's line.
func readStraceSummary(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	calls := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "% time  seconds  usecs/call  calls  [errors]  syscall"
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[len(fields)-1] == "total" {
			continue
		}
		n, err := strconv.Atoi(fields[3])
		if err != nil {
			continue // the header and the rules
		}
		calls[fields[len(fields)-1]] = n
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("no system calls in %s", path)
	}
	return calls, nil
}

func renderSyscalls(counts []syscallCount, small, large int) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("### System calls per call on DynamoDB, new keys\n\n")
	if counts == nil {
		w("Not measured: strace is not installed on this machine.\n")
		return b.String()
	}
	w("Each implementation under `strace -f -c` (all threads), %d and then %d calls; the table gives the\n", small, large)
	w("difference divided by %d, so that start-up and warm-up cancel out. strace slows every call down, so only\n", large-small)
	w("the counts are kept, not the times. Each call makes two DynamoDB requests.\n\n")
	w("| implementation | system calls per call | the most frequent |\n|---|---:|---|\n")
	for _, c := range counts {
		names := make([]string, 0, len(c.perCall))
		for name := range c.perCall {
			names = append(names, name)
		}
		slices.SortFunc(names, func(a, b string) int {
			if c.perCall[a] != c.perCall[b] {
				if c.perCall[a] > c.perCall[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		var top []string
		for _, name := range names[:min(6, len(names))] {
			top = append(top, fmt.Sprintf("%s %.1f", name, c.perCall[name]))
		}
		w("| %s | %.1f | %s |\n", c.impl, c.total, strings.Join(top, ", "))
	}
	return b.String()
}
