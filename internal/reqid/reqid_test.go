package reqid

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestHandlerAddsRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewJSONHandler(&buf, nil)))
	ctx := With(context.Background(), "ABC123")
	log.InfoContext(ctx, "one")
	log.InfoContext(ctx, "two", Attr, "ABC123")
	log.Info("three")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines %q", lines)
	}
	for i, want := range []int{1, 1, 0} {
		if got := strings.Count(lines[i], `"request_id":"ABC123"`); got != want {
			t.Errorf("line %d %s: request_id %d times, want %d", i, lines[i], got, want)
		}
	}
}
