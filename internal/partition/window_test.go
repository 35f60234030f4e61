package partition

import "testing"

// A window keeps the last winLen ticks: older and future ticks read as zero, and sum adds up
// the complete ticks before now, not the current one.
func TestWindow(t *testing.T) {
	var w window
	for tick := int64(100); tick <= 110; tick++ {
		w.cur(tick).writeOps = uint32(tick - 99) // 1 .. 11
	}
	for tick, want := range map[int64]uint32{110: 11, 101: 2, 100: 0, 99: 0, 111: 0, -1: 0} {
		if got := w.tick(tick).writeOps; got != want {
			t.Errorf("tick %d: %d, want %d", tick, got, want)
		}
	}
	if got := w.sum(110).writeOps; got != 2+3+4+5+6+7+8+9+10 {
		t.Errorf("sum of ticks 101..109: %d, want 54", got)
	}
	w.cur(125).writeOps = 1 // a jump past the window clears it
	if got := w.sum(126).writeOps; got != 1 {
		t.Errorf("sum after a jump: %d, want 1", got)
	}
}
