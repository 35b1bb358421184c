// Command gatehouse is the Gatehouse extauth server, control plane, dev gateway and CLI.
// This package only parses flags and wires packages together.
package main

import (
	"fmt"
	"os"
)

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse:", err)
	}
	os.Exit(code)
}
