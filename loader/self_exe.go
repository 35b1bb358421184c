package loader

import "os"

// selfExecutable is the file to run for a child of this process (trial, spare,
// worker) and to read the host's contract from. On Linux it is /proc/self/exe, the
// file this process runs even if its path was replaced since (an upgrade in place):
// a child must have this process's package hashes, not those of the new file, or its
// trial would judge a plugin against a binary the server does not run.
func selfExecutable() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}
