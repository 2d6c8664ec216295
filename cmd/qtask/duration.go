package main

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/qtask/qtask/config"
)

// durationValue is a duration flag read as config.ParseDuration reads
// one: every duration qtask takes accepts the same syntax, days too
// (`wait --timeout 1d` as `prune --older-than 7d`), where pflag's own
// duration flag knows only Go's.
type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := config.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// String is Go's form, but "0" for zero, which pflag takes for "no
// default" in --help (as it does for its own duration flags).
func (d *durationValue) String() string {
	if *d == 0 {
		return "0"
	}
	return time.Duration(*d).String()
}

// Type names the kind in --help and in flagError's "want …".
func (d *durationValue) Type() string { return "duration" }

// durationVar defines a duration flag on fs, as pflag's DurationVar does,
// read with config.ParseDuration.
func durationVar(fs *pflag.FlagSet, p *time.Duration, name string, value time.Duration, usage string) {
	*p = value
	fs.Var((*durationValue)(p), name, usage)
}
