package autorenew

import (
	"strings"
	"testing"
	"time"
)

func TestParseThreshold(t *testing.T) {
	ok := []struct {
		in   string
		want Threshold
		str  string
	}{
		{"70%", Threshold{Percent: 70}, "70%"},
		{"70.5%", Threshold{Percent: 70.5}, "70.5%"},
		{" 60 % ", Threshold{Percent: 60}, "60%"},
		{"0.5%", Threshold{Percent: 0.5}, "0.5%"},
		{"99.9%", Threshold{Percent: 99.9}, "99.9%"},
		{"150000", Threshold{Tokens: 150000}, "150000"},
		{"150k", Threshold{Tokens: 150000}, "150000"},
		{"150K", Threshold{Tokens: 150000}, "150000"},
		{"1.5M", Threshold{Tokens: 1500000}, "1500000"},
		{"2m", Threshold{Tokens: 2000000}, "2000000"},
		{"1", Threshold{Tokens: 1}, "1"},
	}
	for _, c := range ok {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseThreshold(c.in)
			if err != nil {
				t.Fatalf("ParseThreshold(%q): %v", c.in, err)
			}
			if got != c.want {
				t.Fatalf("ParseThreshold(%q) = %+v, want %+v", c.in, got, c.want)
			}
			if got.String() != c.str {
				t.Fatalf("String() = %q, want %q", got.String(), c.str)
			}
			again, err := ParseThreshold(got.String())
			if err != nil || again != got {
				t.Fatalf("ParseThreshold(String()) = %+v, %v; want %+v", again, err, got)
			}
			if !got.Valid() {
				t.Fatalf("%+v not Valid", got)
			}
		})
	}
	bad := []struct{ in, says string }{
		{"abc", `threshold "abc": give a percentage of the context window (70%) or a token count (150000, 150k)`},
		{"", `threshold "": give a percentage`},
		{"%", `give a percentage`},
		{"70%%", `give a percentage`},
		{"0%", "above 0% and below 100%"},
		{"100%", "above 0% and below 100%"},
		{"-5%", "above 0% and below 100%"},
		{"NaN%", "give a percentage"},
		{"0", "a token count must be above 0"},
		{"-10", "a token count must be above 0"},
		{"0k", "a token count must be above 0"},
		{"1.5", "give a percentage"},
		{"1.2345k", "whole number of tokens"},
		{"1e3k", "give a percentage"},
		{"150kk", "give a percentage"},
		{"k", "give a percentage"},
		{"70 percent", "give a percentage"},
	}
	for _, c := range bad {
		t.Run("bad "+c.in, func(t *testing.T) {
			got, err := ParseThreshold(c.in)
			if err == nil {
				t.Fatalf("ParseThreshold(%q) = %+v, want an error", c.in, got)
			}
			if !strings.Contains(err.Error(), c.says) {
				t.Fatalf("ParseThreshold(%q) error %q, want it to say %q", c.in, err, c.says)
			}
		})
	}
}

func TestThresholdZeroIsNotValid(t *testing.T) {
	for _, th := range []Threshold{{}, {Percent: 100}, {Percent: 70, Tokens: 5}, {Tokens: -1}} {
		if th.Valid() {
			t.Errorf("%+v is Valid", th)
		}
	}
}

func TestDefaults(t *testing.T) {
	th := Threshold{Percent: 70}
	c := Defaults(th)
	want := Config{Threshold: th, Settle: 2 * time.Second, FutileMargin: 10, PerHour: 3, WaitMax: 30 * time.Minute}
	if c != want {
		t.Fatalf("Defaults = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("Defaults do not validate: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"per hour 0":   func(c *Config) { c.PerHour = 0 },
		"wait max 0":   func(c *Config) { c.WaitMax = 0 },
		"no threshold": func(c *Config) { c.Threshold = Threshold{} },
		"margin 100":   func(c *Config) { c.FutileMargin = 100 },
		"settle -1":    func(c *Config) { c.Settle = -time.Second },
	} {
		c := Defaults(th)
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: Validate passed %+v", name, c)
		}
	}
}
