module example.com/outoftree

go 1.26.0

require (
	gatehouse.dev/gatehouse v0.0.0
	golang.org/x/sys v0.50.0
)
