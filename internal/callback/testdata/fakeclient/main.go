// Command fakeclient is a lifeloop callback client for tests. Its first
// argument picks a behaviour: a well-behaved client or one misbehaviour.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

const delivered = `{"schema_version":"lifeloop.v0.2","status":"delivered","failure_class":null,"retry_class":null}`

func main() {
	mode := "good"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	switch mode {
	case "good":
		readAll()
		fmt.Println(delivered)
	case "echo":
		// Reports what it received in metadata: the event and the
		// environment lifeloop passed.
		var env struct {
			Request struct {
				Event   string `json:"event"`
				EventID string `json:"event_id"`
			} `json:"request"`
		}
		if err := json.NewDecoder(os.Stdin).Decode(&env); err != nil {
			os.Exit(4)
		}
		_, _ = io.Copy(io.Discard, os.Stdin)
		meta := map[string]string{
			"event":       env.Request.Event,
			"event_id":    env.Request.EventID,
			"session_id":  os.Getenv("LIFELOOP_SESSION_ID"),
			"session_dir": os.Getenv("LIFELOOP_SESSION_DIR"),
			"state_dir":   os.Getenv("LIFELOOP_STATE_DIR"),
		}
		b, _ := json.Marshal(meta)
		fmt.Printf(`{"schema_version":"lifeloop.v0.2","status":"delivered","failure_class":null,"retry_class":null,"metadata":%s}`+"\n", b)
	case "exactjson":
		// Reads byte by byte up to the end of the JSON document and no
		// further, leaving the trailing newline unread.
		var buf []byte
		one := make([]byte, 1)
		for !json.Valid(buf) {
			if _, err := os.Stdin.Read(one); err != nil {
				os.Exit(4)
			}
			buf = append(buf, one[0])
		}
		fmt.Println(delivered)
	case "payloads":
		readAll()
		fmt.Println(`{"schema_version":"lifeloop.v0.2","status":"delivered","failure_class":null,"retry_class":null,"client_payloads":[{"schema_version":1,"payload_id":"pay_1","client_id":"fake","payload_kind":"note","format":"text","content_encoding":"utf8","body":"hello","byte_size":5,"content_digest":"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824","acceptable_placements":[{"placement":"pre_prompt_frame","requirement":"preferred"}]}]}`)
	case "reports-failed":
		readAll()
		fmt.Println(`{"schema_version":"lifeloop.v0.2","status":"failed","failure_class":"payload_rejected","retry_class":"retry_after_reconfigure"}`)
	case "badjson":
		readAll()
		fmt.Println(`{"schema_version":"lifeloop.v0.2","status":`)
	case "notjson":
		readAll()
		fmt.Println("hello from a client that prints text")
	case "empty":
		readAll()
	case "twodocs":
		readAll()
		fmt.Println(delivered)
		fmt.Println(delivered)
	case "unknownfield":
		readAll()
		fmt.Println(`{"schema_version":"lifeloop.v0.2","status":"delivered","failure_class":null,"retry_class":null,"surprise":1}`)
	case "invalid":
		// status failed without a failure class: decodes, fails validation.
		readAll()
		fmt.Println(`{"schema_version":"lifeloop.v0.2","status":"failed","failure_class":null,"retry_class":null}`)
	case "wrongversion":
		readAll()
		fmt.Println(strings.Replace(delivered, "lifeloop.v0.2", "lifeloop.v0.1", 1))
	case "exit1":
		readAll()
		fmt.Fprintln(os.Stderr, "fakeclient: failing on purpose")
		os.Exit(1)
	case "noread":
		fmt.Println(delivered)
	case "hang":
		readAll()
		time.Sleep(time.Hour)
	case "hang-noread":
		time.Sleep(time.Hour)
	case "bigout":
		readAll()
		chunk := strings.Repeat("x", 64<<10)
		for {
			if _, err := os.Stdout.WriteString(chunk); err != nil {
				os.Exit(0)
			}
		}
	case "grandchild":
		// Leaves a descendant holding stdout open after answering.
		readAll()
		fmt.Println(delivered)
		self, _ := os.Executable()
		cmd := exec.Command(self, "sleep")
		cmd.Stdout = os.Stdout
		_ = cmd.Start()
	case "sleep":
		time.Sleep(time.Hour)
	default:
		fmt.Fprintf(os.Stderr, "fakeclient: unknown mode %q\n", mode)
		os.Exit(2)
	}
}

func readAll() { _, _ = io.Copy(io.Discard, os.Stdin) }
