package load

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTicks is USER_HZ, the unit of utime/stime in /proc/<pid>/stat. The kernel fixes it at 100
// on every architecture Go supports (sysconf(_SC_CLK_TCK)); reading it would need cgo.
const clockTicks = 100

// maxProcStatLen bounds what we read; a real stat line is a few hundred bytes.
const maxProcStatLen = 4096

// ProcStat is the part of /proc/<pid>/stat the bench uses.
type ProcStat struct {
	PID   int
	Comm  string // executable name, as the kernel shows it between parentheses
	State byte
	UTime uint64 // user-mode CPU time in clock ticks (field 14)
	STime uint64 // kernel-mode CPU time in clock ticks (field 15)
}

// CPU is the process's user+system time.
func (p ProcStat) CPU() time.Duration {
	return time.Duration(p.UTime+p.STime) * (time.Second / clockTicks)
}

// ParseProcStat parses one /proc/<pid>/stat line. The command name may contain spaces and ')'
// itself, so the fields after it are found from the last ')' (as procps does).
func ParseProcStat(data []byte) (ProcStat, error) {
	if len(data) > maxProcStatLen {
		return ProcStat{}, fmt.Errorf("proc stat: line longer than %d bytes", maxProcStatLen)
	}
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open {
		return ProcStat{}, errors.New("proc stat: no (comm) field")
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil || pid <= 0 {
		return ProcStat{}, fmt.Errorf("proc stat: bad pid %q", bytes.TrimSpace(data[:open]))
	}
	rest := bytes.Fields(data[closing+1:])
	// rest[0] is field 3 (state); utime and stime are fields 14 and 15.
	const utimeIdx, stimeIdx = 14 - 3, 15 - 3
	if len(rest) <= stimeIdx {
		return ProcStat{}, fmt.Errorf("proc stat: %d fields after comm, want at least %d", len(rest), stimeIdx+1)
	}
	if len(rest[0]) != 1 {
		return ProcStat{}, fmt.Errorf("proc stat: bad state %q", rest[0])
	}
	ut, err := strconv.ParseUint(string(rest[utimeIdx]), 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("proc stat: utime: %w", err)
	}
	st, err := strconv.ParseUint(string(rest[stimeIdx]), 10, 64)
	if err != nil {
		return ProcStat{}, fmt.Errorf("proc stat: stime: %w", err)
	}
	return ProcStat{PID: pid, Comm: string(data[open+1 : closing]), State: rest[0][0], UTime: ut, STime: st}, nil
}

// ReadProcessCPU returns the user+system CPU time the process has used so far (pid 0 means this
// process).
func ReadProcessCPU(pid int) (time.Duration, error) {
	path := "/proc/self/stat"
	if pid != 0 {
		path = "/proc/" + strconv.Itoa(pid) + "/stat"
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	ps, err := ParseProcStat(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return ps.CPU(), nil
}

// ReadProcessTreeCPU returns the CPU time used so far by process pid and its children: its
// own user+system time, that of the children it has reaped (cutime, cstime), and that of its
// live children. A database that serves each connection from a child process (PostgreSQL's
// postmaster and its backends) is measured whole this way.
func ReadProcessTreeCPU(pid int) (time.Duration, error) {
	f, err := treeStat(pid)
	if err != nil {
		return 0, err
	}
	ticks := f.self + f.reaped
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil || child == pid {
			continue
		}
		c, err := treeStat(child)
		if err != nil || c.ppid != pid {
			continue // gone meanwhile, or not a child
		}
		ticks += c.self
	}
	return time.Duration(ticks) * (time.Second / clockTicks), nil
}

type treeFields struct {
	ppid         int
	self, reaped uint64 // utime+stime, cutime+cstime (clock ticks)
}

// treeStat reads the fields of /proc/<pid>/stat that ReadProcessTreeCPU needs: ppid (field
// 4), utime, stime, cutime and cstime (14-17).
func treeStat(pid int) (treeFields, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return treeFields{}, fmt.Errorf("read cpu time: %w", err)
	}
	closing := bytes.LastIndexByte(data, ')')
	if closing < 0 {
		return treeFields{}, errors.New("proc stat: no (comm) field")
	}
	rest := bytes.Fields(data[closing+1:])
	if len(rest) < 15 { // rest[0] is field 3
		return treeFields{}, errors.New("proc stat: too few fields")
	}
	var n [5]uint64
	for i, field := range []int{4, 14, 15, 16, 17} {
		v, err := strconv.ParseUint(string(rest[field-3]), 10, 64)
		if err != nil {
			return treeFields{}, fmt.Errorf("proc stat: field %d: %w", field, err)
		}
		n[i] = v
	}
	return treeFields{ppid: int(n[0]), self: n[1] + n[2], reaped: n[3] + n[4]}, nil
}
