// Command go125 is a test plugin built with Go 1.25, which crashes a Go 1.26 process
// that opens it. It cannot import gatehouse (which needs Go 1.26), so it only exports a
// variable; the pre-flight refuses it before its type matters.
package main

// Plugin is the exported symbol.
var Plugin = struct{ Name string }{Name: "go125"}

func main() {}
