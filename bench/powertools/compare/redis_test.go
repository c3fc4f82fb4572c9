package main

import "testing"

func TestMonitorCommand(t *testing.T) {
	tests := []struct {
		line       string
		name       string
		fromClient bool
	}{
		{"+1796170457.829239 [15 127.0.0.1:36140] \"evalsha\" \"a1cd\" \"1\" \"idempotency:bench#6b60\"\r\n", "EVALSHA", true},
		{"+1796170457.829314 [15 lua] \"HGETALL\" \"idempotency:bench#6b60\"\r\n", "HGETALL", false},
		{"+1796170457.832549 [0 unix:/tmp/valkey.sock] \"SET\" \"k\" \"{\\\"a\\\"] \\\"b\\\"}\"\r\n", "SET", true},
		{"+OK\r\n", "", false},
	}
	for _, tt := range tests {
		name, fromClient := command(tt.line)
		if name != tt.name || fromClient != tt.fromClient {
			t.Errorf("command(%q) = %q, %v; want %q, %v", tt.line, name, fromClient, tt.name, tt.fromClient)
		}
	}
}

func TestCPUVerdict(t *testing.T) {
	tests := []struct {
		name                string
		ours, theirs, floor float64
		hasFloor, wantMet   bool
	}{
		{"a tenth", 10, 100, 9, true, true},
		{"a tenth, no floor", 2, 25, 0, false, true},
		{"over a tenth, no floor", 3, 25, 0, false, false},
		{"floor under a tenth", 15, 100, 9, true, false},
		{"floor over a tenth, ours within 10 %", 22, 100, 20, true, true},
		{"floor over a tenth, ours 15 % over it", 23, 100, 20, true, false},
	}
	for _, tt := range tests {
		if _, met := cpuVerdict(tt.ours, tt.theirs, tt.floor, tt.hasFloor); met != tt.wantMet {
			t.Errorf("%s: cpuVerdict(%v, %v, %v, %v) met = %v, want %v", tt.name, tt.ours, tt.theirs, tt.floor, tt.hasFloor, met, tt.wantMet)
		}
	}
}
