package partition

// winLen is the sliding window, in ticks (one second each by default).
const winLen = 10

// counts is one tick of load.
type counts struct {
	readOps, writeOps   uint32
	readEnts, writeEnts uint32
	// demand is every entity asked for, including requests that were refused: heat is judged
	// on demand, since refused clients retry.
	demand uint32
	// busy counts requests refused by a target (ServerBusy or OperationTimedOut).
	busy uint32
}

func (c *counts) add(o counts) {
	c.readOps += o.readOps
	c.writeOps += o.writeOps
	c.readEnts += o.readEnts
	c.writeEnts += o.writeEnts
	c.demand += o.demand
	c.busy += o.busy
}

// window is a ring of per-tick counts: the newest bucket is tick `at`.
type window struct {
	at int64
	b  [winLen]counts
}

// advance moves the newest bucket to tick t, clearing the ticks in between.
func (w *window) advance(t int64) {
	if t <= w.at {
		return
	}
	if t-w.at >= winLen {
		w.b = [winLen]counts{}
	} else {
		for i := w.at + 1; i <= t; i++ {
			w.b[i%winLen] = counts{}
		}
	}
	w.at = t
}

// cur is tick t's bucket (advancing to it).
func (w *window) cur(t int64) *counts {
	w.advance(t)
	return &w.b[t%winLen]
}

// tick returns the counts of tick t, zero if it has left the window or not begun.
func (w *window) tick(t int64) counts {
	if t > w.at || w.at-t >= winLen || t < 0 {
		return counts{}
	}
	return w.b[t%winLen]
}

// sum adds up the winLen-1 complete ticks before now (the current tick is partial).
func (w *window) sum(now int64) counts {
	var s counts
	for t := now - winLen + 1; t < now; t++ {
		c := w.tick(t)
		s.add(c)
	}
	return s
}
