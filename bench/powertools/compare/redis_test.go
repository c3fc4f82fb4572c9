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
