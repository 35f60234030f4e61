package partition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseOptions reads the --emulate-targets spec: "" or "off" (observe only), "on" (Azure's
// targets), or a comma-separated list that turns emulation on and overrides defaults:
//
//	partition=N        entities/s per table partition (2000)
//	queue=N            messages of 1 KiB per second per queue (2000)
//	blob=N             requests/s per blob (500)
//	account=N          requests/s per account, all services together (20000);
//	                   account.NAME=N for one account
//	server=N           entities/s one simulated partition server serves (10000)
//	servers=N          simulated partition servers (16)
//	heat=DUR           how long above target before throttling, splits and moves (3m)
//	move=DUR           how long a moving range partition is offline (5s)
//	tick=DUR           accounting resolution (1s)
//	keys=N             PartitionKeys tracked per table (256)
//	off                keep the parameters but only observe
func ParseOptions(spec string) (Options, error) {
	var o Options
	spec = strings.TrimSpace(spec)
	switch strings.ToLower(spec) {
	case "", "off", "false", "0":
		return o, nil
	case "on", "true", "1":
		o.Emulate = true
		return o, nil
	}
	o.Emulate = true
	var errs []error
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		if f == "off" {
			o.Emulate = false
			continue
		}
		if f == "on" || f == "" {
			continue
		}
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			errs = append(errs, fmt.Errorf("%q is not name=value", f))
			continue
		}
		num := func(p *int) {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 || n > 1<<30 {
				errs = append(errs, fmt.Errorf("%s=%q is not a positive number", k, v))
			}
			*p = n
		}
		dur := func(p *time.Duration) {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > 24*time.Hour {
				errs = append(errs, fmt.Errorf("%s=%q is not a positive duration", k, v))
			}
			*p = d
		}
		switch {
		case k == "partition":
			num(&o.PartitionTarget)
		case k == "queue":
			num(&o.QueueTarget)
		case k == "blob":
			num(&o.BlobTarget)
		case k == "account":
			num(&o.AccountTarget)
		case strings.HasPrefix(k, "account."):
			var n int
			num(&n)
			if o.AccountTargets == nil {
				o.AccountTargets = map[string]int{}
			}
			o.AccountTargets[strings.TrimPrefix(k, "account.")] = n
		case k == "server":
			num(&o.ServerCapacity)
		case k == "servers":
			num(&o.Servers)
		case k == "keys":
			num(&o.TrackedKeys)
		case k == "heat":
			dur(&o.Heat)
		case k == "move":
			dur(&o.Move)
		case k == "tick":
			dur(&o.Tick)
		default:
			errs = append(errs, fmt.Errorf("unknown setting %q", k))
		}
	}
	if o.Servers > 4096 {
		errs = append(errs, errors.New("servers: at most 4096"))
	}
	return o, errors.Join(errs...)
}
