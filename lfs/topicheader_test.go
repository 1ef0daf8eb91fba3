package lfs

import (
	"strings"
	"testing"
)

// A produce without a topic names the header that carries it; a multipart
// init names its JSON field; a bad name is quoted. GET /lfs/download says
// how to call it.
func TestTopicErrorsNameWhereTheTopicGoes(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(nil)
	a := do(t, "POST", srv.URL+"/lfs/produce", strings.NewReader("x"), 1, nil)
	if a.status != 400 || a.code(t) != "missing_topic" || !strings.Contains(string(a.body), "X-Kafka-Topic") {
		t.Fatalf("produce without a topic: %d %s", a.status, a.body)
	}
	a = do(t, "POST", srv.URL+"/lfs/produce", strings.NewReader("x"), 1, map[string]string{"X-Kafka-Topic": "a/b"})
	if a.status != 400 || a.code(t) != "invalid_topic" || !strings.Contains(string(a.body), `X-Kafka-Topic header \"a/b\"`) {
		t.Fatalf("produce with a bad topic: %d %s", a.status, a.body)
	}
	a = doJSON(t, "POST", srv.URL+"/lfs/uploads", map[string]any{"size_bytes": 10})
	if a.status != 400 || a.code(t) != "missing_topic" || !strings.Contains(string(a.body), "JSON field topic") {
		t.Fatalf("upload init without a topic: %d %s", a.status, a.body)
	}
	a = do(t, "GET", srv.URL+"/lfs/download?key=x", nil, 0, nil)
	if a.status != 405 || !strings.Contains(string(a.body), "POST with a JSON body") || !strings.Contains(string(a.body), `\"stream\" or \"presign\"`) {
		t.Fatalf("GET /lfs/download: %d %s", a.status, a.body)
	}
}
