package translate

import (
	"slices"
	"strconv"
	"strings"
)

// listenerOptions is what a listener's option filters are built from, kept up to
// date from the virtual hosts an update adds and removes: how many virtual hosts
// need each filter, and those with jwt (whose providers are listener config), so a
// run does not look at every route of every virtual host.
type listenerOptions struct {
	extract, lua, rbac int
	jwt                map[*VirtualHost]bool
}

// count adds (by +1) or removes (by -1) what vh needs.
func (o *listenerOptions) count(vh *VirtualHost, by int) {
	n := needsOf([]*VirtualHost{vh})
	o.extract += b2i(n.extract) * by
	o.lua += b2i(n.lua) * by
	o.rbac += b2i(n.rbac) * by
	if len(n.jwt) == 0 {
		return
	}
	if o.jwt == nil {
		o.jwt = map[*VirtualHost]bool{}
	}
	if by > 0 {
		o.jwt[vh] = true
	} else {
		delete(o.jwt, vh)
	}
}

// key identifies the option filters: it changes when a filter is needed or no longer
// is, and when a virtual host with jwt comes, goes or changes.
func (o *listenerOptions) key() string {
	var b strings.Builder
	for _, n := range []int{o.extract, o.lua, o.rbac} {
		b.WriteString(strconv.FormatBool(n > 0))
	}
	jwt := make([]string, 0, len(o.jwt))
	for vh := range o.jwt {
		jwt = append(jwt, vh.Name+"@"+vh.Hash)
	}
	slices.Sort(jwt)
	for _, s := range jwt {
		b.WriteString("|" + s)
	}
	return b.String()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
