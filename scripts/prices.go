//go:build ignore

// prices builds internal/pricing/prices.json, lifeloop's embedded price
// table, from the price dataset the npm package @pydantic/genai-prices
// ships (MIT): `make prices` runs it with the pinned version.
//
//	go run scripts/prices.go -version 0.1.8 -out internal/pricing/prices.json
//
// It fetches the package with `npm pack` into a temporary folder, reads
// the dataset out of the package's module with node (the data is a
// literal array in dist/index.js, not exported), and keeps per provider
// and model only what token prices need: the match rules, and input,
// output, cache read and cache write per million tokens with their
// long-context tiers and dated or timed variants.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const pkg = "@pydantic/genai-prices"

// extract prints the dataset of dist/index.js as JSON.
const extract = `
const fs = require('fs'), vm = require('vm');
const src = fs.readFileSync(process.argv[1], 'utf8');
const start = src.indexOf('const E = [');
const end = src.indexOf('\n], ', start);
if (start < 0 || end < 0) { console.error('prices: the dataset literal was not found in ' + process.argv[1]); process.exit(1); }
process.stdout.write(JSON.stringify(vm.runInNewContext('(' + src.slice(start + 'const E = '.length, end + 2) + ')')));
`

func main() {
	version := flag.String("version", "", "the package version to build from (required)")
	out := flag.String("out", "internal/pricing/prices.json", "the table to write")
	flag.Parse()
	if *version == "" {
		fail("give -version (the pinned @pydantic/genai-prices version, see the Makefile)")
	}
	tmp, err := os.MkdirTemp("", "lifeloop-prices-")
	check(err)
	defer os.RemoveAll(tmp)
	run(tmp, "npm", "pack", "--silent", pkg+"@"+*version)
	tgz, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(tgz) != 1 {
		fail("npm pack wrote no tarball")
	}
	run(tmp, "tar", "xzf", tgz[0])
	var meta struct {
		Version string `json:"version"`
		License string `json:"license"`
	}
	check(json.Unmarshal(readFile(filepath.Join(tmp, "package", "package.json")), &meta))
	var times map[string]string
	check(json.Unmarshal(run(tmp, "npm", "view", pkg+"@"+*version, "time", "--json"), &times))
	date := times[meta.Version]
	if len(date) >= 10 {
		date = date[:10]
	}
	raw := run(tmp, "node", "-e", extract, filepath.Join(tmp, "package", "dist", "index.js"))
	var providers []map[string]any
	check(json.Unmarshal(raw, &providers))
	table := map[string]any{
		"source":    "npm " + pkg,
		"version":   meta.Version,
		"date":      date,
		"license":   meta.License,
		"providers": compact(providers),
	}
	b, err := json.Marshal(table)
	check(err)
	check(os.WriteFile(*out, append(b, '\n'), 0o644))
	fmt.Printf("%s: %s %s (%s), %d bytes\n", *out, pkg, meta.Version, date, len(b))
}

// keys maps the dataset's price keys to the table's.
var keys = map[string]string{
	"input_mtok": "input", "output_mtok": "output",
	"cache_read_mtok": "cache_read", "cache_write_mtok": "cache_write",
}

func compact(providers []map[string]any) []map[string]any {
	var outp []map[string]any
	for _, p := range providers {
		cp := map[string]any{"id": p["id"]}
		if m, ok := p["model_match"]; ok {
			cp["match"] = m
		}
		if f, ok := p["fallback_model_providers"]; ok {
			cp["fallback"] = f
		}
		var models []map[string]any
		for _, m := range p["models"].([]any) {
			mm := m.(map[string]any)
			var variants []map[string]any
			switch pr := mm["prices"].(type) {
			case map[string]any:
				if v := prices(pr); v != nil {
					variants = append(variants, v)
				}
			case []any:
				for _, c := range pr {
					cm := c.(map[string]any)
					v := prices(cm["prices"].(map[string]any))
					if v == nil {
						continue
					}
					if con, ok := cm["constraint"].(map[string]any); ok {
						for _, k := range []string{"start_date", "start_time", "end_time"} {
							if s, ok := con[k]; ok {
								v[k] = s
							}
						}
					}
					variants = append(variants, v)
				}
			}
			if len(variants) == 0 {
				continue // no token prices (audio, images, searches only)
			}
			models = append(models, map[string]any{"id": mm["id"], "match": mm["match"], "prices": variants})
		}
		if len(models) > 0 {
			cp["models"] = models
			outp = append(outp, cp)
		}
	}
	return outp
}

// prices keeps the token prices of a dataset price object; nil when it has none.
func prices(pr map[string]any) map[string]any {
	v := map[string]any{}
	for k, to := range keys {
		if x, ok := pr[k]; ok {
			v[to] = x
		}
	}
	if _, in := v["input"]; !in {
		if _, out := v["output"]; !out {
			return nil
		}
	}
	return v
}

func run(dir, name string, args ...string) []byte {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		fail(fmt.Sprintf("%s %s: %v: %s", name, strings.Join(args[:1], " "), err, strings.TrimSpace(stderr.String())))
	}
	return out
}

func readFile(p string) []byte {
	b, err := os.ReadFile(p)
	check(err)
	return b
}

func check(err error) {
	if err != nil {
		fail(err.Error())
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, "prices:", msg)
	os.Exit(1)
}
