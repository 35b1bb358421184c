package benchkit

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Clock turns /proc clock ticks into time.
type Clock struct {
	tick time.Duration // one clock tick, 10ms when CLK_TCK is 100
}

// NewClock asks getconf for CLK_TCK.
func NewClock(ctx context.Context) (Clock, error) {
	out, err := Output(ctx, "", "getconf", "CLK_TCK")
	if err != nil {
		return Clock{}, err
	}
	hz, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || hz <= 0 {
		return Clock{}, fmt.Errorf("getconf CLK_TCK: %q is not a positive number", strings.TrimSpace(out))
	}
	return Clock{tick: time.Second / time.Duration(hz)}, nil
}

// Used is the CPU time (user + system, all threads) process pid has used so far.
func (c Clock) Used(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := parseStatCPU(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * c.tick, nil
}

// MachineBusy is the CPU time all CPUs of the machine have spent busy so far.
func (c Clock) MachineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	ticks, err := parseMachineBusy(string(b))
	if err != nil {
		return 0, fmt.Errorf("/proc/stat: %w", err)
	}
	return time.Duration(ticks) * c.tick, nil
}

// parseMachineBusy sums the busy columns of the "cpu" line of /proc/stat: user, nice,
// system, irq, softirq and steal (guest time is already inside user and nice).
func parseMachineBusy(stat string) (uint64, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("first line %q is not the cpu total", line)
	}
	var busy uint64
	for _, i := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		v, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("cpu column %d: %w", i, err)
		}
		busy += v
	}
	return busy, nil
}

// parseStatCPU returns utime+stime, in clock ticks, from a /proc/<pid>/stat line.
func parseStatCPU(stat string) (uint64, error) {
	f, err := statFields(stat)
	if err != nil {
		return 0, err
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("only %d fields after the command name", len(f))
	}
	utime, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return utime + stime, nil
}

// statFields are the fields of a /proc/<pid>/stat line after the command name, which
// is in parentheses and may itself hold spaces and parentheses: field 3 (state) first.
func statFields(stat string) ([]string, error) {
	i := strings.LastIndexByte(stat, ')')
	if j := strings.IndexByte(stat, '('); i < 0 || j < 0 || i < j {
		return nil, fmt.Errorf("no command name in %q", stat)
	}
	return strings.Fields(stat[i+1:]), nil
}

// ProcStat is what the bench reads of a /proc/<pid>/stat line.
type ProcStat struct {
	Comm  string // command name, at most 15 bytes
	State byte   // R, S, D, Z, …
	PPid  int
}

// parseProcStat reads the command name, state and parent of a /proc/<pid>/stat line.
func parseProcStat(stat string) (ProcStat, error) {
	f, err := statFields(stat)
	if err != nil {
		return ProcStat{}, err
	}
	if len(f) < 2 || len(f[0]) != 1 {
		return ProcStat{}, fmt.Errorf("no state and parent after the command name in %q", stat)
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return ProcStat{}, fmt.Errorf("parent pid: %w", err)
	}
	return ProcStat{Comm: stat[strings.IndexByte(stat, '(')+1 : strings.LastIndexByte(stat, ')')], State: f[0][0], PPid: ppid}, nil
}

// ReadProcStat reads /proc/<pid>/stat.
func ReadProcStat(pid int) (ProcStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ProcStat{}, err
	}
	return parseProcStat(string(b))
}

// Pids lists the processes in /proc.
func Pids() ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out, nil
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
		if err != nil || st.PPid != os.Getpid() || st.Comm != name {
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
	var st Mem
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return st, err
	}
	defer f.Close()
	fields := map[string]*int64{"VmRSS:": &st.RSS, "RssFile:": &st.File, "VmHWM:": &st.Peak}
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), "\t")
		if dst := fields[name]; dst != nil {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return st, fmt.Errorf("/proc/%d/status: %s %q: %w", pid, name, v, err)
			}
			*dst, found = kb<<10, found+1
		}
	}
	if found != len(fields) {
		return st, fmt.Errorf("/proc/%d/status: want VmRSS, RssFile and VmHWM, found %d of them", pid, found)
	}
	return st, sc.Err()
}

// CPUWatch measures how much of the machine other processes use over a stretch, and
// how much CPU each watched process used.
type CPUWatch struct {
	clock Clock
	pids  []int
	start time.Time
	busy  time.Duration   // machine busy at start
	used  []time.Duration // each pid's CPU at start
}

// WatchOthers starts a CPUWatch that counts every process but pids.
func WatchOthers(clock Clock, pids ...int) (*CPUWatch, error) {
	w := &CPUWatch{clock: clock, pids: pids, start: time.Now()}
	var err error
	w.busy, w.used, err = w.read()
	return w, err
}

func (w *CPUWatch) read() (time.Duration, []time.Duration, error) {
	busy, err := w.clock.MachineBusy()
	used := make([]time.Duration, len(w.pids))
	for i, pid := range w.pids {
		if err == nil {
			used[i], err = w.clock.Used(pid)
		}
	}
	return busy, used, err
}

// Others is the share of all CPUs other processes used since the start, less cpu
// (the time of a process started after the watch).
func (w *CPUWatch) Others(cpu time.Duration) (float64, error) {
	others, _, err := w.Since(cpu)
	return others, err
}

// Since is Others, and the CPU time each of the watched pids used since the start.
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

// cpuModel is the first "model name" in path, or "unknown".
func cpuModel(path string) string {
	b, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
