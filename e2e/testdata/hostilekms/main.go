// hostile KMS proxy: forwards to upstream, misbehaves per mode set via /__mode?m=...
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

var (
	mu       sync.Mutex
	mode     = "pass"
	opFilter = "" // only misbehave on this op (e.g. GenerateDataKey); "" = all
	lastGDK  map[string]any
	counts   = map[string]int{}
	otherKey = ""
)

func main() {
	up := os.Args[2]
	http.HandleFunc("/__mode", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		mode = r.URL.Query().Get("m")
		opFilter = r.URL.Query().Get("op")
		otherKey = r.URL.Query().Get("other")
		log.Printf("mode=%s op=%s other=%s", mode, opFilter, otherKey)
		counts = map[string]int{}
	})
	http.HandleFunc("/__counts", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		json.NewEncoder(w).Encode(counts)
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "TrentService.")
		mu.Lock()
		m, f := mode, opFilter
		counts[op]++
		mu.Unlock()
		active := f == "" || f == op
		if !active {
			m = "pass"
		}
		switch {
		case strings.HasPrefix(m, "delay="):
			d, _ := time.ParseDuration(strings.TrimPrefix(m, "delay="))
			time.Sleep(d)
		case m == "hang":
			<-r.Context().Done()
			return
		case m == "hangif":
			mu.Lock()
			sub := otherKey
			mu.Unlock()
			if strings.Contains(string(body), sub) {
				<-r.Context().Done()
				return
			}
		case m == "drop":
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
			return
		case m == "500":
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(500)
			io.WriteString(w, `{"__type":"KMSInternalException","message":"boom"}`)
			return
		case m == "throttle":
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(400)
			io.WriteString(w, `{"__type":"ThrottlingException","message":"Rate exceeded"}`)
			return
		case m == "accessdenied":
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(400)
			io.WriteString(w, `{"__type":"AccessDeniedException","message":"nope"}`)
			return
		case m == "garbage":
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(200)
			io.WriteString(w, `{"Plaintext": 12`)
			return
		}
		req, _ := http.NewRequest(r.Method, up+r.URL.Path, bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			w.WriteHeader(502)
			return
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			var out map[string]any
			if json.Unmarshal(rb, &out) == nil {
				changed := true
				mu.Lock()
				switch {
				case m == "wrongplain" && (op == "GenerateDataKey" || op == "Decrypt"):
					b := make([]byte, 32)
					rand.Read(b)
					out["Plaintext"] = base64.StdEncoding.EncodeToString(b)
				case m == "shortplain" && (op == "GenerateDataKey" || op == "Decrypt"):
					out["Plaintext"] = base64.StdEncoding.EncodeToString(make([]byte, 16))
				case m == "longplain" && (op == "GenerateDataKey" || op == "Decrypt"):
					out["Plaintext"] = base64.StdEncoding.EncodeToString(make([]byte, 64))
				case m == "otherkeyid":
					out["KeyId"] = otherKey
				case m == "replaygdk" && op == "GenerateDataKey":
					// answer the previous GenerateDataKey (another object's key)
					if lastGDK != nil {
						prev := lastGDK
						lastGDK = out
						out = prev
					} else {
						lastGDK = out
					}
				case m == "bigblob" && op == "GenerateDataKey":
					b := make([]byte, 2000)
					rand.Read(b)
					out["CiphertextBlob"] = base64.StdEncoding.EncodeToString(b)
				default:
					changed = false
				}
				if op == "GenerateDataKey" && m != "replaygdk" {
					lastGDK = out
				}
				mu.Unlock()
				if changed {
					rb, _ = json.Marshal(out)
					log.Printf("%s: altered (%s)", op, m)
				}
			}
		}
		for k, v := range resp.Header {
			if strings.EqualFold(k, "Content-Length") {
				continue
			}
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		w.Write(rb)
	})
	log.Fatal(http.ListenAndServe(os.Args[1], nil))
}
