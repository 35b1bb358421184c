// Command inithang is a test plugin that never finishes opening. Before it blocks it
// starts a child process and, if INITHANG_PIDFILE is set, writes the child's pid there,
// so a test can check that a timed-out trial load kills the whole process group.
package main

import (
	"os"
	"os/exec"
	"strconv"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Plugin is never set: init does not return.
var Plugin pluginapi.ExtAuthPlugin

func init() {
	child := exec.Command("sleep", "300")
	if err := child.Start(); err == nil {
		if f := os.Getenv("INITHANG_PIDFILE"); f != "" {
			_ = os.WriteFile(f, []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		}
	}
	time.Sleep(time.Hour)
}

func main() {}
