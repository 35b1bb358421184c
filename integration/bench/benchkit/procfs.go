package benchkit

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// CPUUsed is the CPU time (user + system, all threads) process pid has used so far.
func CPUUsed(pid int) (time.Duration, error) {
	st, err := ReadProcStat(pid)
	if err != nil {
		return 0, err
	}
	return seconds(st.CPUTime()), nil
}

// machineBusy is the CPU time all CPUs of the machine have spent busy so far: user,
// nice, system, irq, softirq and steal (guest time is already inside user and nice).
func machineBusy() (time.Duration, error) {
	st, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, err
	}
	s, err := st.Stat()
	if err != nil {
		return 0, err
	}
	c := s.CPUTotal
	return seconds(c.User + c.Nice + c.System + c.IRQ + c.SoftIRQ + c.Steal), nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// ReadProcStat reads /proc/<pid>/stat.
func ReadProcStat(pid int) (procfs.ProcStat, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return procfs.ProcStat{}, err
	}
	return p.Stat()
}

// Pids lists the processes in /proc.
func Pids() ([]int, error) {
	ps, err := procfs.AllProcs()
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.PID
	}
	return out, err
}

// ChildNamed is the pid of the one child of this process whose command name is name,
// such as the redis-server the harness started.
func ChildNamed(name string) (int, error) {
	all, err := Pids()
	if err != nil {
		return 0, err
	}
	found := 0
	for _, pid := range all {
		st, err := ReadProcStat(pid)
		if err != nil || st.PPID != os.Getpid() || st.Comm != name {
			continue
		}
		if found != 0 {
			return 0, fmt.Errorf("more than one %s started by the bench (%d, %d)", name, found, pid)
		}
		found = pid
	}
	if found == 0 {
		return 0, fmt.Errorf("no %s started by the bench in /proc", name)
	}
	return found, nil
}

// Mem is what /proc/<pid>/status says about a process's memory, in bytes.
type Mem struct {
	RSS  int64 // VmRSS: resident now
	File int64 // RssFile: of it, pages of mapped files (mostly the binary's own)
	Peak int64 // VmHWM: the highest RSS so far
}

// ReadMem reads pid's Mem.
func ReadMem(pid int) (Mem, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return Mem{}, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return Mem{}, err
	}
	return Mem{RSS: int64(st.VmRSS), File: int64(st.RssFile), Peak: int64(st.VmHWM)}, nil
}

// RSS is pid's resident set size now.
func RSS(pid int) (int64, error) {
	m, err := ReadMem(pid)
	return m.RSS, err
}

// CPUWatch measures how much of the machine other processes use over a stretch, and
// how much CPU each watched process used.
type CPUWatch struct {
	pids  []int
	start time.Time
	busy  time.Duration   // machine busy at start
	used  []time.Duration // each pid's CPU at start
}

// WatchOthers starts a CPUWatch that counts every process but pids.
func WatchOthers(pids ...int) (*CPUWatch, error) {
	w := &CPUWatch{pids: pids, start: time.Now()}
	var err error
	w.busy, w.used, err = w.read()
	return w, err
}

func (w *CPUWatch) read() (time.Duration, []time.Duration, error) {
	busy, err := machineBusy()
	used := make([]time.Duration, len(w.pids))
	for i, pid := range w.pids {
		if err == nil {
			used[i], err = CPUUsed(pid)
		}
	}
	return busy, used, err
}

// Since is the share of all CPUs other processes used since the start, less cpu (the
// time of a process started after the watch), and the CPU time each watched pid used.
func (w *CPUWatch) Since(cpu time.Duration) (others float64, used []time.Duration, err error) {
	busy, used, err := w.read()
	if err != nil {
		return 0, nil, err
	}
	wall := time.Since(w.start) * time.Duration(runtime.NumCPU())
	busy -= w.busy + cpu
	for i := range used {
		used[i] -= w.used[i]
		busy -= used[i]
	}
	return max(0, float64(busy)/float64(wall)), used, nil
}

// LoadAverage is the machine's 1, 5 and 15 minute load averages: the timings of a
// shared machine are read with them.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// cpuModel is the first CPU's model name, or "unknown".
func cpuModel() string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return "unknown"
	}
	if cs, err := fs.CPUInfo(); err == nil && len(cs) > 0 && cs[0].ModelName != "" {
		return cs[0].ModelName
	}
	return "unknown"
}
