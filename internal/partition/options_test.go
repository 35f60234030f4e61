package partition

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	for _, spec := range []string{"", "off", " OFF ", "false", "0"} {
		if o, err := ParseOptions(spec); err != nil || o.Emulate {
			t.Errorf("%q: %+v, %v; want observing only", spec, o, err)
		}
	}
	for _, spec := range []string{"on", "true", "1"} {
		if o, err := ParseOptions(spec); err != nil || !o.Emulate {
			t.Errorf("%q: %+v, %v; want emulating", spec, o, err)
		}
	}
	o, err := ParseOptions("partition=1, queue=1073741824,,on,blob=7,account=9,account.Big=100,server=11,servers=4096,keys=5,heat=24h,move=1ns,tick=250ms")
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Emulate: true, PartitionTarget: 1, QueueTarget: 1 << 30, BlobTarget: 7, AccountTarget: 9,
		AccountTargets: map[string]int{"Big": 100}, ServerCapacity: 11, Servers: 4096, TrackedKeys: 5,
		Heat: 24 * time.Hour, Move: time.Nanosecond, Tick: 250 * time.Millisecond}
	if fmt.Sprint(o) != fmt.Sprint(want) {
		t.Errorf("parsed %+v\nwant   %+v", o, want)
	}
	if o, err := ParseOptions("partition=5,off"); err != nil || o.Emulate || o.PartitionTarget != 5 {
		t.Errorf("off in a list: %+v, %v; want the parameters kept, observing only", o, err)
	}
	for bad, msg := range map[string]string{
		"partition":        `"partition" is not name=value`,
		"partition=0":      `partition="0" is not a positive number`,
		"queue=-3":         `queue="-3" is not a positive number`,
		"blob=1073741825":  `blob="1073741825" is not a positive number`,
		"keys=many":        `keys="many" is not a positive number`,
		"heat=0s":          `heat="0s" is not a positive duration`,
		"move=-1s":         `move="-1s" is not a positive duration`,
		"tick=24h0m0.001s": `tick="24h0m0.001s" is not a positive duration`,
		"heat=soon":        `heat="soon" is not a positive duration`,
		"servers=4097":     "servers: at most 4096",
		"colour=red":       `unknown setting "colour"`,
	} {
		_, err := ParseOptions(bad)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want an error with %q", bad, err, msg)
		}
	}
}
